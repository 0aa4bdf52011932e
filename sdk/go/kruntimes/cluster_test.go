package kruntimes

// Tests against a real cluster with the chart installed (test/e2e/sdk-go.test.ts sets this up:
// a fresh namespace with the chart's gateway and Runtimes, and a token kubeconfig of a
// ServiceAccount with the Role docs/sdk/go.md asks for). They are skipped without
// KRUNTIMES_TEST_KUBECONFIG.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

type clusterEnv struct {
	kubeconfig, namespace, gatewayNamespace, adminKubeconfig string
}

func cluster(t *testing.T) clusterEnv {
	t.Helper()
	e := clusterEnv{
		kubeconfig:       os.Getenv("KRUNTIMES_TEST_KUBECONFIG"),
		namespace:        os.Getenv("KRUNTIMES_TEST_NAMESPACE"),
		gatewayNamespace: os.Getenv("KRUNTIMES_TEST_GATEWAY_NAMESPACE"),
		adminKubeconfig:  os.Getenv("KRUNTIMES_TEST_ADMIN_KUBECONFIG"),
	}
	if e.kubeconfig == "" {
		t.Skip("KRUNTIMES_TEST_KUBECONFIG is not set (test/e2e/sdk-go.test.ts sets it)")
	}
	t.Parallel()
	return e
}

func (e clusterEnv) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := NewFromKubeconfig(ctx, e.kubeconfig, append([]Option{WithGatewayNamespace(e.gatewayNamespace)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, sentinel error) *Error {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want %v", err, sentinel)
	}
	return asError(t, err)
}

// collectLogs reads a Run's lines until want holds (the records of a call are written when it
// ends, so they may trail its answer by a moment).
func collectLogs(t *testing.T, ctx context.Context, c *Client, name string, o LogOptions, want func([]LogLine) bool) []LogLine {
	t.Helper()
	var lines []LogLine
	for range 50 {
		lines = lines[:0]
		for l, err := range c.Logs(ctx, name, o) {
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		if want(lines) {
			return lines
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("logs of %s never matched: %+v", name, lines)
	return nil
}

func texts(lines []LogLine, s Stream) []string {
	var out []string
	for _, l := range lines {
		if l.Stream == s {
			out = append(out, l.Text)
		}
	}
	return out
}

func TestClusterTasks(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	res, err := c.RunTask(ctx, TaskSpec{
		Runtime: "bash", Env: map[string]string{"WHO": "go"},
		Script: "echo out-$WHO\necho err >&2\necho greeting=hello >> \"$KRUNTIME_OUTPUTS\"\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() || res.ExitCode != 0 || res.Reason != "Completed" || res.Outputs["greeting"] != "hello" || res.Stdout != "out-go\n" || res.Stderr != "err\n" {
		t.Fatalf("result: %+v", res)
	}
	lines := collectLogs(t, ctx, c, res.Name, LogOptions{}, func(l []LogLine) bool { return len(l) == 2 })
	if !slices.Equal(texts(lines, Stdout), []string{"out-go"}) || !slices.Equal(texts(lines, Stderr), []string{"err"}) || lines[0].Attempt != 1 || lines[0].FromStatus {
		t.Fatalf("logs: %+v", lines)
	}

	runs, err := c.ListRuns(ctx, "")
	if err != nil || !slices.ContainsFunc(runs, func(r Run) bool { return r.Name == res.Name && r.Mode() == ModeTask }) {
		t.Fatalf("ListRuns: %d runs, %v", len(runs), err)
	}

	failed, err := c.RunTask(ctx, TaskSpec{Runtime: "bash", Script: "echo nope >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if failed.Succeeded() || failed.Phase != PhaseFailed || failed.Reason != "NonZeroExit" || failed.ExitCode != 3 || failed.Stderr != "nope\n" {
		t.Fatalf("failed result: %+v", failed)
	}

	args, err := c.RunTask(ctx, TaskSpec{Runtime: "bash", Args: []string{"echo a", "echo b"}})
	if err != nil || args.Stdout != "a\nb\n" {
		t.Fatalf("args task: %+v %v", args, err)
	}

	// The API's own validation (a CEL rule) is an InvalidArgument with its message.
	bad := &Run{Spec: RunSpec{Runtime: "bash", Source: &Source{Inline: "echo"}, Mode: RunModeSpec{Task: &TaskMode{Args: []string{"x"}}}}}
	bad.GenerateName = "bad-"
	_, err = c.CreateRun(ctx, bad)
	if e := wantCode(t, err, ErrInvalidArgument); !strings.Contains(e.Message, "standalone script") {
		t.Fatalf("validation message: %v", err)
	}
}

// Follow prints the lines as the task writes them and ends when the task does.
func TestClusterFollowLogs(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	r, err := c.CreateRun(ctx, TaskSpec{Runtime: "bash", Script: "for i in 1 2 3; do echo line $i; sleep 0.3; done; echo done >&2"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for l, err := range c.Logs(ctx, r.Name, LogOptions{Follow: true}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l.Stream)+":"+l.Text)
	}
	if want := []string{"stdout:line 1", "stdout:line 2", "stdout:line 3", "stderr:done"}; !slices.Equal(got, want) {
		t.Fatalf("followed %q, want %q", got, want)
	}
	run, err := c.GetRun(ctx, r.Name)
	if err != nil || !run.Terminal() {
		t.Fatalf("the follow ended before the Run: %v %v", run.Status.Phase, err)
	}
	for _, err := range c.Logs(ctx, r.Name, LogOptions{Attempt: 2}) {
		wantCode(t, err, ErrInvalidArgument)
	}
}

func TestClusterWaitCancelDelete(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	r, err := c.CreateRun(ctx, TaskSpec{Runtime: "bash", Script: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitRun(ctx, r.Name, InPhase(PhaseRunning)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.WaitRun(short, r.Name)
	if wantCode(t, err, ErrDeadlineExceeded); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "phase Running") {
		t.Fatalf("bounded wait: %v", err)
	}
	if _, err := c.CancelRun(ctx, r.Name); err != nil {
		t.Fatal(err)
	}
	res, err := c.TaskResult(ctx, r.Name)
	if err != nil || res.Phase != PhaseCancelled {
		t.Fatalf("cancelled: %+v %v", res, err)
	}
	if _, err := c.CancelRun(ctx, r.Name); err != nil {
		t.Fatalf("cancelling an ended Run: %v", err)
	}
	if err := c.DeleteRun(ctx, r.Name); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetRun(ctx, r.Name)
	wantCode(t, err, ErrNotFound)
	wantCode(t, c.DeleteRun(ctx, r.Name), ErrNotFound)

	// A Run deleted while someone waits for it ends the wait with NotFound.
	r2, err := c.CreateRun(ctx, TaskSpec{Runtime: "bash", Script: "sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	watching := make(chan struct{})
	var once sync.Once
	go func() {
		// The condition first runs on the Run as read before the watch starts from it.
		_, err := c.WaitRun(ctx, r2.Name, func(*Run) bool {
			once.Do(func() { close(watching) })
			return false
		})
		waited <- err
	}()
	<-watching
	if err := c.DeleteRun(ctx, r2.Name); err != nil {
		t.Fatal(err)
	}
	if e := wantCode(t, <-waited, ErrNotFound); !strings.Contains(e.Message, "deleted while waiting") {
		t.Fatalf("wait on a deleted Run: %v", e)
	}
}

const pythonHandler = `import time

def handler(request):
    body = request.json()
    print(f"called with {body.get('name')}")
    if body.get("fail"):
        raise ValueError("bad input: " + body["fail"])
    if body.get("sleep"):
        time.sleep(body["sleep"])
    return {"hello": body.get("name", "world"), "caller": request.headers.get("x-caller", "")}
`

func createFunction(t *testing.T, ctx context.Context, c *Client, spec FunctionSpec) string {
	t.Helper()
	r, err := c.CreateRun(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = c.CancelRun(ctx, r.Name)
	})
	if _, err := c.WaitReady(ctx, r.Name); err != nil {
		t.Fatal(err)
	}
	return r.Name
}

func TestClusterPythonFunction(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	fn := createFunction(t, ctx, c, FunctionSpec{Runtime: "python", Source: pythonHandler, Concurrency: 2})

	resp, err := c.InvokeJSON(ctx, fn, map[string]string{"name": "go"}, WithHeader("X-Caller", "sdk-test"))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Hello, Caller string }
	if err := resp.JSON(&out); err != nil || out.Hello != "go" || out.Caller != "sdk-test" || resp.Status != 200 || resp.ContentType != "application/json" || resp.InvocationID == "" {
		t.Fatalf("response %+v %+v %v", resp, out, err)
	}
	raw, err := c.Invoke(ctx, fn, []byte(`{"name":"raw"}`), WithContentType("application/json"))
	if err != nil || !strings.Contains(string(raw.Body), `"hello":"raw"`) {
		t.Fatalf("raw invoke: %v %v", raw, err)
	}
	lines := collectLogs(t, ctx, c, fn, LogOptions{Call: resp.InvocationID}, func(l []LogLine) bool { return len(l) > 0 })
	if len(lines) != 1 || lines[0].Text != "called with go" || lines[0].Call != resp.InvocationID {
		t.Fatalf("the invocation's logs: %+v", lines)
	}

	_, err = c.InvokeJSON(ctx, fn, map[string]string{"name": "x", "fail": "nope"})
	wantCode(t, err, ErrHandler)
	var he *HandlerError
	if !errors.As(err, &he) || he.Type != "ValueError" || he.Message != "bad input: nope" || !strings.Contains(he.Traceback, "ValueError") || he.InvocationID == "" {
		t.Fatalf("handler error: %+v", he)
	}

	// The run stays Ready after a handler error; the context's deadline bounds a slow call.
	slow, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.InvokeJSON(slow, fn, map[string]any{"name": "slow", "sleep": 5})
	wantCode(t, err, ErrDeadlineExceeded)
	if time.Since(start) > 3*time.Second {
		t.Fatalf("the deadline was not honoured: %s", time.Since(start))
	}

	_, err = c.OpenSession(ctx, fn)
	if e := wantCode(t, err, ErrInvalidArgument); e.Mode != ModeFunction {
		t.Fatalf("open a function as a session: %v", err)
	}
	// The gateway refuses session calls on a function Run (409 with its mode).
	_, err = (&Session{c: c, name: fn}).Stat(ctx, "")
	if e := wantCode(t, err, ErrNotReady); e.Mode != ModeFunction || e.Phase != PhaseReady {
		t.Fatalf("session call on a function: %+v", e)
	}
}

func TestClusterBashFunction(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	fn := createFunction(t, ctx, c, FunctionSpec{Runtime: "bash", Source: `handler() {
  body=$(cat)
  if [[ $body == fail ]]; then echo "failing on purpose" >&2; return 3; fi
  echo "hello, $body"
}
`})
	resp, err := c.Invoke(ctx, fn, []byte("go"))
	if err != nil || string(resp.Body) != "hello, go\n" || !strings.HasPrefix(resp.ContentType, "text/plain") {
		t.Fatalf("bash invoke: %+v %v", resp, err)
	}
	_, err = c.Invoke(ctx, fn, []byte("fail"))
	var he *HandlerError
	if !errors.As(err, &he) || he.Type != "NonZeroExit" || he.ExitCode != 3 || !strings.Contains(he.Traceback, "failing on purpose") {
		t.Fatalf("bash handler error: %v %+v", err, he)
	}
}

// adminDynamic is a client with the cluster's admin credentials, for setting up test identities.
func (e clusterEnv) adminDynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	if e.adminKubeconfig == "" {
		t.Skip("KRUNTIMES_TEST_ADMIN_KUBECONFIG is not set")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", e.adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// tokenWithoutInvoke makes a ServiceAccount that may read Runs but not call them, and returns
// a token of it.
func (e clusterEnv) tokenWithoutInvoke(t *testing.T, ctx context.Context) string {
	t.Helper()
	dyn := e.adminDynamic(t)
	name := fmt.Sprintf("sdk-go-reader-%d", time.Now().UnixNano()%1e6)
	create := func(gvr schema.GroupVersionResource, obj map[string]any, sub ...string) *unstructured.Unstructured {
		u, err := dyn.Resource(gvr).Namespace(e.namespace).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}, sub...)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	rbac := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: r}
	}
	sas := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	create(sas, map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": name}})
	create(rbac("roles"), map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]any{"name": name},
		"rules": []any{map[string]any{"apiGroups": []any{Group}, "resources": []any{"runs"}, "verbs": []any{"get", "list", "watch"}}}})
	create(rbac("rolebindings"), map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": e.namespace}}})
	tr := create(sas, map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"expirationSeconds": int64(600)}}, "token")
	// Create needs the object's name for a subresource: the ServiceAccount's.
	tok, _, _ := unstructured.NestedString(tr.Object, "status", "token")
	if tok == "" {
		t.Fatal("no token in the TokenRequest")
	}
	return tok
}

func TestClusterGatewayErrors(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)

	_, err := c.Invoke(ctx, "no-such-run", nil)
	if e := wantCode(t, err, ErrNotFound); e.Run != "no-such-run" || e.Namespace != c.Namespace() {
		t.Fatalf("404: %+v", e)
	}

	task, err := c.RunTask(ctx, TaskSpec{Runtime: "bash", Script: "true"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(ctx, task.Name, nil)
	if e := wantCode(t, err, ErrNotReady); e.Mode != ModeTask || e.Phase != PhaseSucceeded {
		t.Fatalf("409: %+v", e)
	}

	bad := e.client(t, WithToken("not-a-token"))
	_, err = bad.Invoke(ctx, "no-such-run", nil)
	wantCode(t, err, ErrUnauthenticated)

	reader := e.client(t, WithToken(e.tokenWithoutInvoke(t, ctx)))
	_, err = reader.Invoke(ctx, "no-such-run", nil)
	if e := wantCode(t, err, ErrPermissionDenied); !strings.Contains(e.Message, "runs/invoke") {
		t.Fatalf("403 should name the grant: %v", err)
	}
	_, err = reader.OpenSession(ctx, "whatever")
	wantCode(t, err, ErrNotFound)

	// The Kubernetes API's refusal reads the same way, with the Role to ask for.
	readerKube := e.readerKubeconfig(t, ctx)
	rc, err := NewFromKubeconfig(ctx, readerKube, WithGatewayNamespace(e.gatewayNamespace))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, err = rc.CreateRun(ctx, TaskSpec{Runtime: "bash", Script: "true"})
	if e := wantCode(t, err, ErrPermissionDenied); !strings.Contains(e.Hint, "create on runs.kruntimes.io") {
		t.Fatalf("kube 403: %v", err)
	}
}

// readerKubeconfig is the test kubeconfig with the token of a ServiceAccount that may only read Runs.
func (e clusterEnv) readerKubeconfig(t *testing.T, ctx context.Context) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	tok := e.tokenWithoutInvoke(t, ctx)
	for _, a := range cfg.AuthInfos {
		a.Token = tok
	}
	path := t.TempDir() + "/reader.kubeconfig"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestClusterSession(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 3*time.Minute)
	s, err := c.CreateSession(ctx, SessionSpec{MaxQueuedOperations: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	fi, err := s.WriteFile(ctx, "in/data.txt", []byte("one\ntwo\n"), WithParents(), WithFileMode(0o600))
	if err != nil || fi.Path != "in/data.txt" || fi.Size != 8 || fi.Mode != 0o600 || fi.Type != TypeFile {
		t.Fatalf("write: %+v %v", fi, err)
	}
	res, err := s.Exec(ctx, Command{Shell: "wc -l < data.txt; echo $GREETING $EXTRA; cat; echo warn >&2; exit 4", Dir: "in", Env: map[string]string{"GREETING": "hi", "EXTRA": "there"}, Stdin: []byte("from stdin\n")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success() || res.Reason != ExitExited || res.ExitCode != 4 || string(res.Stdout) != "2\nhi there\nfrom stdin\n" || string(res.Stderr) != "warn\n" || res.OperationID == "" {
		t.Fatalf("exec: %+v stdout %q stderr %q", res.ExecExit, res.Stdout, res.Stderr)
	}
	var kinds []string
	for ev, err := range s.ExecStream(ctx, Argv("sh", "-c", "echo a; sleep 0.2; echo b")) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Started != nil:
			kinds = append(kinds, "started")
		case ev.Output != nil:
			kinds = append(kinds, string(ev.Output.Stream)+":"+string(ev.Output.Data))
		case ev.Exited != nil:
			kinds = append(kinds, fmt.Sprintf("exited:%d", ev.Exited.ExitCode))
		}
	}
	if want := []string{"started", "stdout:a\n", "stdout:b\n", "exited:0"}; !slices.Equal(kinds, want) {
		t.Fatalf("events %q, want %q", kinds, want)
	}
	notFound, err := s.Exec(ctx, Argv("no-such-command"))
	if err != nil || notFound.Reason != ExitStartFailed {
		t.Fatalf("missing command: %+v %v", notFound, err)
	}

	// A 2.5 MiB upload in 1 MiB chunks, read back as a stream and from an offset.
	big := make([]byte, 5<<19)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	if _, err := s.WriteFile(ctx, "big.bin", big); err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if r.Info().Size != int64(len(big)) {
		t.Fatalf("info: %+v", r.Info())
	}
	var got []byte
	buf := make([]byte, 100_000)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	r.Close()
	if string(got) != string(big) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(big))
	}
	part, err := s.OpenRange(ctx, "big.bin", 26, 5)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 10)
	n, _ := part.Read(b)
	part.Close()
	if string(b[:n]) != "abcde" {
		t.Fatalf("range read %q", b[:n])
	}

	for i := range 5 {
		if _, err := s.WriteFile(ctx, fmt.Sprintf("pages/f%d", i), []byte("x"), WithParents()); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for fi, err := range s.ListFiles(ctx, "pages", WithPageSize(2)) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, fi.Name)
	}
	if want := []string{"f0", "f1", "f2", "f3", "f4"}; !slices.Equal(names, want) {
		t.Fatalf("listed %q", names)
	}
	var first []string
	for fi, err := range s.ListFiles(ctx, "pages", WithPageSize(2)) {
		if err != nil {
			t.Fatal(err)
		}
		if first = append(first, fi.Name); len(first) == 3 {
			break
		}
	}
	if len(first) != 3 {
		t.Fatalf("breaking out of the listing: %q", first)
	}

	if fi, err := s.Stat(ctx, "in"); err != nil || !fi.IsDir() {
		t.Fatalf("stat dir: %+v %v", fi, err)
	}
	if _, err := s.MakeDir(ctx, "x/y", true); err != nil {
		t.Fatal(err)
	}
	if fi, err := s.Rename(ctx, "in/data.txt", "x/y/data.txt", false); err != nil || fi.Path != "x/y/data.txt" {
		t.Fatalf("rename: %+v %v", fi, err)
	}
	if removed, err := s.Remove(ctx, "x/y/data.txt"); err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
	if removed, err := s.RemoveAll(ctx, "pages"); err != nil || !removed {
		t.Fatalf("remove all: %v %v", removed, err)
	}

	_, err = s.ReadFile(ctx, "missing.txt")
	if e := wantCode(t, err, ErrNotFound); e.Path != "missing.txt" {
		t.Fatalf("missing file: %+v", e)
	}
	_, err = s.Stat(ctx, "../outside")
	wantCode(t, err, ErrPermissionDenied)
	_, err = s.WriteFile(ctx, "big.bin", []byte("no"), WithWriteMode(WriteCreate))
	wantCode(t, err, ErrAlreadyExists)
	if fi, err := s.WriteFile(ctx, "big.bin", []byte("!"), WithWriteMode(WriteAppend)); err != nil || fi.Size != int64(len(big))+1 {
		t.Fatalf("append: %+v %v", fi, err)
	}

	// Background processes.
	p, err := s.StartProcess(ctx, "worker", Shell("sleep 0.2; echo finished"))
	if err != nil || p.ID != "worker" {
		t.Fatalf("start process: %+v %v", p, err)
	}
	p, err = s.WaitProcess(ctx, "worker", 10*time.Second)
	if err != nil || p.Running || p.ExitCode != 0 || !strings.Contains(string(p.StdoutTail), "finished") {
		t.Fatalf("wait process: %+v %v", p, err)
	}
	if ps, err := s.ListProcesses(ctx); err != nil || len(ps) != 1 {
		t.Fatalf("list processes: %+v %v", ps, err)
	}

	// The queue holds one mutation behind the running one: of three sent while a command runs,
	// one waits and the others are refused busy.
	started := make(chan struct{})
	running := make(chan error, 1)
	go func() {
		var err error
		for ev, e := range s.ExecStream(ctx, Shell("sleep 3")) {
			if ev.Started != nil {
				close(started)
			}
			err = e
		}
		running <- err
	}()
	<-started
	results := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := s.Exec(ctx, Shell("true"))
			results <- err
		}()
	}
	busy := 0
	for range 3 {
		err := <-results
		if err == nil {
			continue
		}
		be := wantCode(t, err, ErrBusy)
		if be.RetryAfter < time.Second || be.Reason != ReasonSessionBusy {
			t.Fatalf("busy: %+v", be)
		}
		if d, ok := RetryAfter(err); !ok || d < time.Second {
			t.Fatalf("RetryAfter: %s %v", d, ok)
		}
		busy++
	}
	if busy == 0 {
		t.Fatal("no exec was refused busy behind a full queue")
	}
	if err := <-running; err != nil {
		t.Fatal(err)
	}

	// CancelOperation stops a running command.
	var exit *ExecExit
	for ev, err := range s.ExecStream(ctx, Shell("echo started; sleep 30")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Output != nil {
			if ok, err := s.CancelOperation(ctx, ev.OperationID); err != nil || !ok {
				t.Fatalf("cancel operation: %v %v", ok, err)
			}
		}
		if ev.Exited != nil {
			exit = ev.Exited
		}
	}
	if exit == nil || exit.Reason != ExitCancelled {
		t.Fatalf("cancelled exec: %+v", exit)
	}

	// Leaving the loop early ends the call, and the session cancels the command: the next
	// mutation does not wait for it.
	for ev, err := range s.ExecStream(ctx, Shell("echo hi; sleep 30")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Output != nil {
			break
		}
	}
	start := time.Now()
	if _, err := s.Exec(ctx, Shell("true")); err != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("the exec after leaving one early: %v after %s", err, time.Since(start))
	}

	// The session's logs: the command output, keyed by operation, and the audit records.
	lines := collectLogs(t, ctx, c, s.Name(), LogOptions{Call: res.OperationID}, func(l []LogLine) bool {
		return slices.Contains(texts(l, Stderr), "warn") && len(texts(l, Stdout)) == 3
	})
	if !slices.Equal(texts(lines, Stdout), []string{"2", "hi there", "from stdin"}) {
		t.Fatalf("exec's log lines: %+v", lines)
	}
	var audit bool
	for l, err := range s.Logs(ctx, LogOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		audit = audit || strings.HasPrefix(l.Text, "audit: write_file by system:serviceaccount:")
	}
	if !audit {
		t.Fatal("no audit record in the session's logs")
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing twice: %v", err)
	}
	run, err := s.Wait(ctx)
	if err != nil || run.Status.Phase != PhaseSucceeded || run.Status.Reason != "Drained" {
		t.Fatalf("drained: %+v %v", run.Status, err)
	}
	_, err = s.Stat(ctx, "")
	if e := wantCode(t, err, ErrNotReady); e.Phase != PhaseSucceeded || e.Mode != ModeSession {
		t.Fatalf("a call after the end: %+v", e)
	}
	if err := s.Cancel(); err != nil {
		t.Fatalf("cancel after the end: %v", err)
	}
}

func TestClusterSessionCancel(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	s, err := c.CreateSession(ctx, SessionSpec{Name: fmt.Sprintf("cancel-me-%d", time.Now().UnixNano()%1e6)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	opened, err := c.OpenSession(ctx, s.Name())
	if err != nil || opened.Name() != s.Name() || opened.Namespace() != c.Namespace() {
		t.Fatalf("open: %v %v", opened, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := opened.Exec(ctx, Shell("sleep 60"))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := s.Cancel(); err != nil {
		t.Fatal(err)
	}
	run, err := s.Wait(ctx)
	if err != nil || run.Status.Phase != PhaseCancelled {
		t.Fatalf("cancelled: %+v %v", run.Status, err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the running exec did not end with the session")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close after cancel: %v", err)
	}
}

// Outside the pod network the client opens `kubectl port-forward` itself (here the test binary
// stands in for kubectl, relaying to a gateway pod), and reopens it when kubectl exits.
func TestClusterPortForward(t *testing.T) {
	e := cluster(t)
	direct := e.client(t)
	ctx := testContext(t, 2*time.Minute)
	eps := direct.shared.disc.endpoints
	if len(eps) == 0 {
		t.Fatal("no gateway endpoints discovered")
	}
	argsFile := t.TempDir() + "/kubectl-args.json"
	kubectl := shimKubectl(t, eps[0].hostPort(), argsFile, false)
	c := e.client(t, WithGatewayVia(ViaPortForward), WithKubectl(kubectl))
	_, err := c.Invoke(ctx, "no-such-run", nil)
	wantCode(t, err, ErrNotFound)
	via, err := c.GatewayVia(ctx)
	if err != nil || !strings.HasPrefix(via, "port-forward pod/") {
		t.Fatalf("via %q %v", via, err)
	}
	type record struct {
		Args []string `json:"args"`
		PID  int      `json:"pid"`
	}
	read := func() record {
		var r record
		if err := json.Unmarshal(must(os.ReadFile(argsFile)), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	rec := read()
	want := []string{"port-forward", "-n", e.gatewayNamespace, strings.TrimPrefix(via, "port-forward "), fmt.Sprintf(":%d", eps[0].port), "--address", "127.0.0.1", "--kubeconfig", e.kubeconfig}
	if !slices.Equal(rec.Args, want) {
		t.Fatalf("kubectl args %q, want %q", rec.Args, want)
	}

	fn := createFunction(t, ctx, c, FunctionSpec{Runtime: "python", Source: pythonHandler})
	if resp, err := c.InvokeJSON(ctx, fn, map[string]string{"name": "forwarded"}); err != nil || !strings.Contains(string(resp.Body), "forwarded") {
		t.Fatalf("invoke through the forward: %v %v", resp, err)
	}

	// kubectl dies (its pod went away, say): the next calls start a new one.
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for range 20 {
		if _, lastErr = c.InvokeJSON(ctx, fn, map[string]string{"name": "again"}); lastErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lastErr != nil {
		t.Fatalf("after kubectl died: %v", lastErr)
	}
	again := read()
	if again.PID == rec.PID {
		t.Fatal("no new port-forward was started")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(again.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kubectl %d still runs after Close: %v", again.PID, err)
	}
	_, err = c.Invoke(ctx, fn, nil)
	wantCode(t, err, ErrInvalidArgument)
}

// Inside the pod network (as here) the gateway pods are dialled directly; a URL that the
// certificate does not name fails verification with advice, and skipping verification works.
func TestClusterDirectAndURL(t *testing.T) {
	e := cluster(t)
	c := e.client(t)
	ctx := testContext(t, time.Minute)
	via, err := c.GatewayVia(ctx)
	if err != nil || !strings.HasPrefix(via, "direct ") {
		t.Fatalf("via %q %v", via, err)
	}
	ep := c.shared.disc.endpoints[0]
	byIP := e.client(t, WithGatewayURL("https://"+ep.hostPort()))
	_, err = byIP.Invoke(ctx, "no-such-run", nil)
	if e := wantCode(t, err, ErrUnavailable); !strings.Contains(e.Hint, "WithCAFile") {
		t.Fatalf("unverified URL: %v", err)
	}
	insecure := e.client(t, WithGatewayURL("https://"+ep.hostPort()+"/"), WithInsecureSkipVerify())
	_, err = insecure.Invoke(ctx, "no-such-run", nil)
	wantCode(t, err, ErrNotFound)
	grpc := e.client(t, WithGRPC())
	_, err = grpc.Invoke(ctx, "no-such-run", nil)
	wantCode(t, err, ErrNotFound)
	_, err = e.client(t, WithGatewayURL("ftp://x")).Invoke(ctx, "x", nil)
	wantCode(t, err, ErrInvalidArgument)
}
