// Package kruntimes is the Go client of kruntimes, a Kubernetes-native warm execution
// substrate: Runs (tasks, functions and sessions) placed on warm pods of a Runtime.
//
// Install it with
//
//	go get github.com/kruntimes/kruntimes/sdk/go
//
// and import "github.com/kruntimes/kruntimes/sdk/go/kruntimes".
//
// A task, from a program outside the cluster:
//
//	ctx := context.Background()
//	c, err := kruntimes.NewFromKubeconfig(ctx, "") // $KUBECONFIG or ~/.kube/config
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer c.Close()
//	res, err := c.RunTask(ctx, kruntimes.TaskSpec{Runtime: "bash", Script: "echo hello"})
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Print(res.Phase, " ", res.Stdout) // Succeeded hello
//
// # Clients
//
// A [Client] talks to the Kubernetes API (Runs are custom resources, kruntimes.io/v1alpha1)
// with client-go, and to the kruntimes gateway (function calls, session operations) with
// Connect over HTTP/2 and TLS, sending a Kubernetes bearer token:
//
//   - [NewFromKubeconfig]: outside the cluster, with a kubeconfig's credentials. The gateway
//     Service is found by its label in the gateway namespace ([WithGatewayNamespace], else
//     $KRT_GATEWAY_NAMESPACE, else "kruntimes"), its certificate verified with the CA the chart publishes, and reached at a
//     gateway pod's IP when one answers, else through a `kubectl port-forward` that the client
//     opens and [Client.Close] ends — or at [WithGatewayURL].
//   - [NewInCluster]: in a pod, with its ServiceAccount token, at https://<service>.<namespace>.svc.
//   - [NewFromRESTConfig]: from a client-go configuration you already have.
//
// # Runs, functions, sessions
//
// Runs are created from a [TaskSpec], [FunctionSpec], [SessionSpec] or a [Run] you wrote
// ([Client.CreateRun]), read ([Client.GetRun]), waited for with a watch ([Client.WaitRun],
// [Client.WaitReady], [Client.TaskResult]), cancelled ([Client.CancelRun]) and deleted
// ([Client.DeleteRun]); their output is read or followed with [Client.Logs]. Function Runs are
// called with [Client.Invoke] and [Client.InvokeJSON]; session Runs are driven through a
// [Session] (exec, files, processes) and ended with [Session.Close] (drain) or [Session.Cancel].
//
// # Errors
//
// Refusals of the gateway and the Kubernetes API are *[Error] values with a [Code]; test them
// with errors.Is and the sentinels ([ErrNotFound], [ErrNotReady], [ErrPermissionDenied],
// [ErrUnauthenticated], [ErrBusy], [ErrDeadlineExceeded], [ErrHandler], …) or read them with
// errors.As. A function handler's own failure is a *[HandlerError]; [RetryAfter] says when a
// busy or unavailable call may be retried.
//
// The guide, with the RBAC a user needs, is docs/sdk/go.md in the repository.
package kruntimes
