package kruntimes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	gatewayv1 "github.com/kruntimes/kruntimes/sdk/go/gen/kruntimes/gateway/v1"
)

func connectErr(t *testing.T, code connect.Code, msg string, retryAfter string, details ...proto.Message) error {
	t.Helper()
	e := connect.NewError(code, errors.New(msg))
	for _, d := range details {
		ed, err := connect.NewErrorDetail(d)
		if err != nil {
			t.Fatal(err)
		}
		e.AddDetail(ed)
	}
	if retryAfter != "" {
		e.Meta().Set("Retry-After", retryAfter)
	}
	return e
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v (%T) is not an *Error", err, err)
	}
	return e
}

// The gateway's table (gateway/errors.ts): each Connect code and detail maps onto one Code.
func TestGatewayErrorTable(t *testing.T) {
	tg := target{op: "invoke", namespace: "team", run: "hello", via: "direct 10.0.0.7:8443"}
	failure := func(r gatewayv1.Failure_Reason, secs uint32) *gatewayv1.Failure {
		return &gatewayv1.Failure{Reason: r, RetryAfterSeconds: secs}
	}
	cases := []struct {
		name       string
		err        error
		code       Code
		sentinel   error
		reason     FailureReason
		retryAfter time.Duration
	}{
		{"no token", connectErr(t, connect.CodeUnauthenticated, "no token", ""), CodeUnauthenticated, ErrUnauthenticated, "", 0},
		{"no grant", connectErr(t, connect.CodePermissionDenied, "may not create runs/invoke", ""), CodePermissionDenied, ErrPermissionDenied, "", 0},
		{"no run", connectErr(t, connect.CodeNotFound, "run team/hello does not exist", ""), CodeNotFound, ErrNotFound, "", 0},
		{"not ready", connectErr(t, connect.CodeFailedPrecondition, "not ready", "", &gatewayv1.RunNotReady{Phase: "Pending", Mode: "function"}), CodeNotReady, ErrNotReady, "", 0},
		{"request too large", connectErr(t, connect.CodeResourceExhausted, "too large", "", failure(gatewayv1.Failure_REASON_REQUEST_TOO_LARGE, 0)), CodeTooLarge, ErrTooLarge, ReasonRequestTooLarge, 0},
		{"response too large", connectErr(t, connect.CodeResourceExhausted, "too large", "", failure(gatewayv1.Failure_REASON_RESPONSE_TOO_LARGE, 0)), CodeTooLarge, ErrTooLarge, ReasonResponseTooLarge, 0},
		{"function busy", connectErr(t, connect.CodeResourceExhausted, "busy", "3", failure(gatewayv1.Failure_REASON_FUNCTION_BUSY, 3)), CodeBusy, ErrBusy, ReasonFunctionBusy, 3 * time.Second},
		{"gateway busy, detail only", connectErr(t, connect.CodeResourceExhausted, "busy", "", failure(gatewayv1.Failure_REASON_GATEWAY_BUSY, 2)), CodeBusy, ErrBusy, ReasonGatewayBusy, 2 * time.Second},
		{"session busy", connectErr(t, connect.CodeResourceExhausted, "session busy", "1"), CodeBusy, ErrBusy, ReasonSessionBusy, time.Second},
		{"busy without a wait", connectErr(t, connect.CodeResourceExhausted, "session busy", ""), CodeBusy, ErrBusy, ReasonSessionBusy, time.Second},
		{"unreachable", connectErr(t, connect.CodeUnavailable, "pod unreachable", "1", failure(gatewayv1.Failure_REASON_UNREACHABLE, 1)), CodeUnavailable, ErrUnavailable, ReasonUnreachable, time.Second},
		{"worker crashed", connectErr(t, connect.CodeUnavailable, "crashed", "1", failure(gatewayv1.Failure_REASON_WORKER_CRASHED, 1)), CodeUnavailable, ErrUnavailable, ReasonWorkerCrashed, time.Second},
		{"deadline", connectErr(t, connect.CodeDeadlineExceeded, "deadline", "", failure(gatewayv1.Failure_REASON_DEADLINE, 0)), CodeDeadlineExceeded, ErrDeadlineExceeded, ReasonDeadline, 0},
		{"invalid", connectErr(t, connect.CodeInvalidArgument, "bad page token", ""), CodeInvalidArgument, ErrInvalidArgument, "", 0},
		{"exists", connectErr(t, connect.CodeAlreadyExists, "exists", ""), CodeAlreadyExists, ErrAlreadyExists, "", 0},
		{"canceled", connectErr(t, connect.CodeCanceled, "canceled", ""), CodeCanceled, ErrCanceled, "", 0},
		{"internal", connectErr(t, connect.CodeInternal, "boom", ""), CodeInternal, ErrInternal, "", 0},
		{"unknown without detail", connectErr(t, connect.CodeUnknown, "boom", ""), CodeInternal, ErrInternal, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := gatewayError(c.err, tg)
			e := asError(t, err)
			if e.Code != c.code || e.Reason != c.reason || e.RetryAfter != c.retryAfter {
				t.Fatalf("got code %s reason %q retry %s, want %s %q %s", e.Code, e.Reason, e.RetryAfter, c.code, c.reason, c.retryAfter)
			}
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("errors.Is(%v, %v) is false", err, c.sentinel)
			}
			for _, other := range sentinels {
				if other != c.sentinel && errors.Is(err, other) {
					t.Fatalf("errors.Is(%v, %v) is true", err, other)
				}
			}
			var ce *connect.Error
			if !errors.As(err, &ce) {
				t.Fatal("the connect error is not unwrappable")
			}
			if e.Namespace != "team" || e.Run != "hello" || e.Op != "invoke" {
				t.Fatalf("target lost: %+v", e)
			}
		})
	}
}

func TestNotReadyDetail(t *testing.T) {
	err := gatewayError(connectErr(t, connect.CodeFailedPrecondition, "is a task Run", "", &gatewayv1.RunNotReady{Phase: "Succeeded", Mode: "task"}), target{op: "invoke", namespace: "ns", run: "r"})
	e := asError(t, err)
	if e.Phase != PhaseSucceeded || e.Mode != ModeTask {
		t.Fatalf("phase/mode: %q %q", e.Phase, e.Mode)
	}
	if want := "kruntimes: invoke ns/r: not ready (phase Succeeded, mode task): is a task Run"; e.Error() != want {
		t.Fatalf("message:\n%s\nwant\n%s", e.Error(), want)
	}
}

func TestHandlerErrorDetail(t *testing.T) {
	h := &gatewayv1.HandlerError{Type: "ValueError", Message: "bad input", Traceback: "Traceback…", ExitCode: 0, InvocationId: "inv-1"}
	err := gatewayError(connectErr(t, connect.CodeUnknown, "handler raised", "", h), target{op: "invoke", namespace: "ns", run: "fn"})
	if !errors.Is(err, ErrHandler) {
		t.Fatal("not ErrHandler")
	}
	var he *HandlerError
	if !errors.As(err, &he) {
		t.Fatal("errors.As does not find the *HandlerError")
	}
	if he.Type != "ValueError" || he.Message != "bad input" || he.Traceback != "Traceback…" || he.InvocationID != "inv-1" {
		t.Fatalf("detail: %+v", he)
	}
	if want := "kruntimes: invoke ns/fn: handler failed: handler error: ValueError: bad input (invocation inv-1)"; err.Error() != want {
		t.Fatalf("message:\n%s\nwant\n%s", err.Error(), want)
	}
	bash := gatewayError(connectErr(t, connect.CodeUnknown, "exited", "", &gatewayv1.HandlerError{Type: "NonZeroExit", Message: "the handler exited with status 3", ExitCode: 3}), target{})
	if !errors.As(bash, &he) || he.ExitCode != 3 {
		t.Fatalf("bash detail: %+v", he)
	}
}

// A failed connection (no Failure detail, no Retry-After) says how the gateway was reached.
func TestConnectionFailure(t *testing.T) {
	err := gatewayError(connect.NewError(connect.CodeUnavailable, errors.New("dial tcp 10.0.0.7:8443: connect: connection refused")), target{op: "exec", namespace: "ns", run: "s", via: "direct 10.0.0.7:8443"})
	e := asError(t, err)
	if e.Code != CodeUnavailable || !strings.Contains(e.Message, "cannot reach the gateway (direct 10.0.0.7:8443)") || e.Hint == "" {
		t.Fatalf("got %+v", e)
	}
	if d, ok := RetryAfter(err); !ok || d != 0 {
		t.Fatalf("RetryAfter: %s %v", d, ok)
	}
	tlsErr := gatewayError(connect.NewError(connect.CodeUnavailable, errors.New("tls: failed to verify certificate: x509: certificate is valid for localhost")), target{via: "url https://10.0.0.7:8443"})
	if !strings.Contains(asError(t, tlsErr).Hint, "WithCAFile") {
		t.Fatalf("TLS hint: %v", tlsErr)
	}
}

func TestRetryAfter(t *testing.T) {
	busy := gatewayError(connectErr(t, connect.CodeResourceExhausted, "busy", "4"), target{})
	if d, ok := RetryAfter(busy); !ok || d != 4*time.Second {
		t.Fatalf("busy: %s %v", d, ok)
	}
	if _, ok := RetryAfter(gatewayError(connectErr(t, connect.CodeNotFound, "no", ""), target{})); ok {
		t.Fatal("NotFound is not retryable")
	}
	if _, ok := RetryAfter(errors.New("plain")); ok {
		t.Fatal("a plain error is not retryable")
	}
	wrapped := fmt.Errorf("calling: %w", busy)
	if d, ok := RetryAfter(wrapped); !ok || d != 4*time.Second {
		t.Fatalf("wrapped: %s %v", d, ok)
	}
}

func TestContextErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := gatewayError(ctx.Err(), target{op: "invoke"})
	if !errors.Is(err, ErrDeadlineExceeded) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	err = kubeError(ctx2.Err(), target{op: "get run"}, "get", runsResourceName)
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
}

// Kubernetes API errors map by status, with advice for a missing right.
func TestKubeErrors(t *testing.T) {
	runs := schema.GroupResource{Group: Group, Resource: "runs"}
	tg := target{op: "create run", namespace: "team", run: "x"}
	cases := []struct {
		err  error
		code Code
	}{
		{apierrors.NewNotFound(runs, "x"), CodeNotFound},
		{apierrors.NewForbidden(runs, "x", errors.New("no")), CodePermissionDenied},
		{apierrors.NewUnauthorized("who"), CodeUnauthenticated},
		{apierrors.NewAlreadyExists(runs, "x"), CodeAlreadyExists},
		{apierrors.NewConflict(runs, "x", errors.New("changed")), CodeConflict},
		{apierrors.NewInvalid(schema.GroupKind{Group: Group, Kind: "Run"}, "x", nil), CodeInvalidArgument},
		{apierrors.NewBadRequest("bad"), CodeInvalidArgument},
		{apierrors.NewTooManyRequests("slow down", 7), CodeBusy},
		{apierrors.NewTimeoutError("slow", 1), CodeDeadlineExceeded},
		{apierrors.NewServiceUnavailable("down"), CodeUnavailable},
		{errors.New("dial tcp: connection refused"), CodeUnavailable},
	}
	for _, c := range cases {
		e := asError(t, kubeError(c.err, tg, "create", runsResourceName))
		if e.Code != c.code {
			t.Errorf("%v: got %s, want %s", c.err, e.Code, c.code)
		}
	}
	forbidden := asError(t, kubeError(apierrors.NewForbidden(runs, "x", errors.New("no")), tg, "create", runsResourceName))
	if !strings.Contains(forbidden.Hint, `create on runs.kruntimes.io in namespace "team"`) {
		t.Errorf("forbidden hint: %q", forbidden.Hint)
	}
	busy := asError(t, kubeError(apierrors.NewTooManyRequests("slow down", 7), tg, "create", runsResourceName))
	if busy.RetryAfter != 7*time.Second {
		t.Errorf("429 retry after: %s", busy.RetryAfter)
	}
	if kubeError(nil, tg, "", "") != nil || gatewayError(nil, tg) != nil {
		t.Error("nil must stay nil")
	}
}

func TestErrorMessage(t *testing.T) {
	e := &Error{Code: CodePermissionDenied, Op: "read file", Namespace: "ns", Run: "s", Path: "../x", Message: "refused", Hint: "stay inside"}
	if want := "kruntimes: read file ns/s:../x: permission denied: refused; stay inside"; e.Error() != want {
		t.Fatalf("%s\nwant\n%s", e.Error(), want)
	}
	b := &Error{Code: CodeBusy, Op: "exec", RetryAfter: 2 * time.Second, Message: "queue full"}
	if want := "kruntimes: exec: busy (retry after 2s): queue full"; b.Error() != want {
		t.Fatalf("%s\nwant\n%s", b.Error(), want)
	}
}
