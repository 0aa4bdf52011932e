package kruntimes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	gatewayv1 "github.com/kruntimes/kruntimes/sdk/go/gen/kruntimes/gateway/v1"
)

// Code classifies an [Error]. Every error the package returns for a refusal by the gateway or the
// Kubernetes API carries one; compare it directly, or use errors.Is with the matching sentinel
// ([ErrNotFound], [ErrBusy], …).
type Code string

// The codes. The gateway's Connect codes map onto them as in its error table
// (docs/concepts/gateway.md#errors); Kubernetes API errors map by HTTP status.
const (
	// CodeUnauthenticated: no token, or one the cluster rejected (401).
	CodeUnauthenticated Code = "Unauthenticated"
	// CodePermissionDenied: RBAC does not allow the call (403), or a session path outside the
	// workspace.
	CodePermissionDenied Code = "PermissionDenied"
	// CodeNotFound: no such Run (or, for session file calls, no such path).
	CodeNotFound Code = "NotFound"
	// CodeNotReady: the Run cannot serve the call now: not Ready yet, finished, Finalizing, or
	// of another mode (function vs session). See [Error.Phase] and [Error.Mode].
	CodeNotReady Code = "NotReady"
	// CodeBusy: a queue is full (the function's, the session's or the gateway's); retry after
	// [Error.RetryAfter].
	CodeBusy Code = "Busy"
	// CodeTooLarge: a request or response body above a limit.
	CodeTooLarge Code = "TooLarge"
	// CodeUnavailable: the gateway or the Run's pod could not be reached; retry after
	// [Error.RetryAfter] when it is set.
	CodeUnavailable Code = "Unavailable"
	// CodeDeadlineExceeded: the call's deadline (the context's, or the Run's own timeout) passed.
	CodeDeadlineExceeded Code = "DeadlineExceeded"
	// CodeCanceled: the context was canceled.
	CodeCanceled Code = "Canceled"
	// CodeHandlerError: a function's handler raised or exited non-zero; see [Error.Handler].
	CodeHandlerError Code = "HandlerError"
	// CodeInvalidArgument: the request was refused as malformed (a Run the API's validation
	// rejects, a bad page token, …), or a spec builder found a mistake before sending.
	CodeInvalidArgument Code = "InvalidArgument"
	// CodeAlreadyExists: a Run of that name, or (WriteFile with create mode) a file at that path.
	CodeAlreadyExists Code = "AlreadyExists"
	// CodeConflict: the Run changed between read and write; read it again.
	CodeConflict Code = "Conflict"
	// CodeRunEnded: a wait for Ready found the Run already ended (see [Error.Phase]).
	CodeRunEnded Code = "RunEnded"
	// CodeInternal: anything else (a bug, an unexpected answer).
	CodeInternal Code = "Internal"
)

// Sentinel errors, one per [Code]: errors.Is(err, ErrNotFound) is true for every *Error with
// CodeNotFound.
var (
	ErrUnauthenticated  = errors.New("kruntimes: unauthenticated")
	ErrPermissionDenied = errors.New("kruntimes: permission denied")
	ErrNotFound         = errors.New("kruntimes: not found")
	ErrNotReady         = errors.New("kruntimes: not ready")
	ErrBusy             = errors.New("kruntimes: busy")
	ErrTooLarge         = errors.New("kruntimes: too large")
	ErrUnavailable      = errors.New("kruntimes: unavailable")
	ErrDeadlineExceeded = errors.New("kruntimes: deadline exceeded")
	ErrCanceled         = errors.New("kruntimes: canceled")
	ErrHandler          = errors.New("kruntimes: handler error")
	ErrInvalidArgument  = errors.New("kruntimes: invalid argument")
	ErrAlreadyExists    = errors.New("kruntimes: already exists")
	ErrConflict         = errors.New("kruntimes: conflict")
	ErrRunEnded         = errors.New("kruntimes: run ended")
	ErrInternal         = errors.New("kruntimes: internal error")
)

var (
	sentinels = map[Code]error{
		CodeUnauthenticated: ErrUnauthenticated, CodePermissionDenied: ErrPermissionDenied, CodeNotFound: ErrNotFound,
		CodeNotReady: ErrNotReady, CodeBusy: ErrBusy, CodeTooLarge: ErrTooLarge, CodeUnavailable: ErrUnavailable,
		CodeDeadlineExceeded: ErrDeadlineExceeded, CodeCanceled: ErrCanceled, CodeHandlerError: ErrHandler,
		CodeInvalidArgument: ErrInvalidArgument, CodeAlreadyExists: ErrAlreadyExists, CodeConflict: ErrConflict,
		CodeRunEnded: ErrRunEnded, CodeInternal: ErrInternal,
	}
	// defaultBusyRetryWait is the wait a busy answer without Retry-After implies (the gateway's).
	defaultBusyRetryWait = time.Second
)

// FailureReason is the gateway's reason for a RESOURCE_EXHAUSTED, UNAVAILABLE or
// DEADLINE_EXCEEDED refusal (its Failure detail), or SessionBusy for a full session queue, which
// carries no detail.
type FailureReason string

// The reasons ([gatewayv1.Failure_Reason] names without the REASON_ prefix).
const (
	ReasonRequestTooLarge  FailureReason = "REQUEST_TOO_LARGE"
	ReasonResponseTooLarge FailureReason = "RESPONSE_TOO_LARGE"
	ReasonFunctionBusy     FailureReason = "FUNCTION_BUSY"
	ReasonGatewayBusy      FailureReason = "GATEWAY_BUSY"
	ReasonSessionBusy      FailureReason = "SESSION_BUSY"
	ReasonUnreachable      FailureReason = "UNREACHABLE"
	ReasonDeadline         FailureReason = "DEADLINE"
	ReasonWorkerCrashed    FailureReason = "WORKER_CRASHED"
)

// Error is the error of every call that the gateway or the Kubernetes API refused, and of
// arguments the package refused before sending. Use errors.As to read its fields, or errors.Is
// with a sentinel ([ErrNotFound], …) to test its Code.
type Error struct {
	// Code classifies the error.
	Code Code
	// Op is the operation, e.g. "invoke", "exec", "create run".
	Op string
	// Namespace and Run name the Run the call was about, when there is one.
	Namespace, Run string
	// Path is the session path the call was about, when there is one.
	Path string
	// Message is what the server (or the package) said.
	Message string
	// Hint says what to do next, when the message does not already.
	Hint string
	// RetryAfter is how long to wait before retrying (Busy, Unavailable), 0 when not given.
	RetryAfter time.Duration
	// Reason is the gateway's Failure reason, when it sent one (or ReasonSessionBusy).
	Reason FailureReason
	// Phase is the Run's phase: the gateway's RunNotReady detail (CodeNotReady), or the Run's
	// state (CodeRunEnded).
	Phase Phase
	// Mode is the Run's mode, with Phase (a function called as a session shows "function").
	Mode Mode
	// Handler is the function's own failure (CodeHandlerError).
	Handler *HandlerError
	// Err is the underlying error (a *connect.Error, a Kubernetes API status, a context error).
	Err error
}

// HandlerError is the structured detail of a function handler's failure: a python exception or
// a bash handler's non-zero exit. The Run stays Ready. errors.As finds it in an [Error] with
// CodeHandlerError.
type HandlerError struct {
	// Type is the exception type ("ValueError"), or "NonZeroExit" for bash.
	Type string
	// Message is the exception's message.
	Message string
	// Traceback is the bounded traceback (python) or the stderr tail (bash).
	Traceback string
	// ExitCode is a bash handler's exit status.
	ExitCode int
	// InvocationID identifies the invocation in the function's logs (LogOptions.Call).
	InvocationID string
}

// Error implements error.
func (h *HandlerError) Error() string {
	s := "handler error: " + h.Type
	if h.Message != "" {
		s += ": " + h.Message
	}
	if h.InvocationID != "" {
		s += " (invocation " + h.InvocationID + ")"
	}
	return s
}

// Error implements error: "kruntimes: <op> <namespace>/<run>[:<path>]: <code>: <message>[; <hint>]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("kruntimes: ")
	b.WriteString(e.Op)
	if e.Run != "" {
		if e.Op != "" {
			b.WriteString(" ")
		}
		if e.Namespace != "" {
			b.WriteString(e.Namespace + "/")
		}
		b.WriteString(e.Run)
		if e.Path != "" {
			b.WriteString(":" + e.Path)
		}
	}
	if e.Op != "" || e.Run != "" {
		b.WriteString(": ")
	}
	b.WriteString(codeText(e))
	if e.Handler != nil {
		b.WriteString(": " + e.Handler.Error())
	} else if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

func codeText(e *Error) string {
	switch e.Code {
	case CodeNotReady:
		if e.Phase != "" || e.Mode != "" {
			return fmt.Sprintf("not ready (phase %s, mode %s)", orDash(string(e.Phase)), orDash(string(e.Mode)))
		}
		return "not ready"
	case CodeBusy:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("busy (retry after %s)", e.RetryAfter)
		}
		return "busy"
	case CodeRunEnded:
		return fmt.Sprintf("run ended (phase %s)", orDash(string(e.Phase)))
	case CodeHandlerError:
		return "handler failed"
	}
	// "PermissionDenied" → "permission denied".
	var b strings.Builder
	for i, r := range string(e.Code) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Is reports whether target is the sentinel of e's Code (errors.Is(err, ErrNotFound)).
func (e *Error) Is(target error) bool {
	return target != nil && sentinels[e.Code] == target
}

// Unwrap returns the handler detail (if any) and the underlying error, so errors.As finds a
// *HandlerError and errors.Is finds context.DeadlineExceeded or context.Canceled.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Handler != nil {
		out = append(out, e.Handler)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// RetryAfter returns how long err asks the caller to wait before retrying, and whether it is
// retryable at all: Busy (at least a second) and Unavailable errors are; others are not.
func RetryAfter(err error) (time.Duration, bool) {
	var e *Error
	if !errors.As(err, &e) {
		return 0, false
	}
	switch e.Code {
	case CodeBusy:
		if e.RetryAfter <= 0 {
			return defaultBusyRetryWait, true
		}
		return e.RetryAfter, true
	case CodeUnavailable:
		return e.RetryAfter, true
	}
	return 0, false
}

// target names what a call was about, for errors.
type target struct {
	op, namespace, run, path string
	// via is how the gateway was reached ("direct 10.0.0.7:8443", "port-forward pod/x", a URL).
	via string
}

func (t target) err(code Code, msg string) *Error {
	return &Error{Code: code, Op: t.op, Namespace: t.namespace, Run: t.run, Path: t.path, Message: msg}
}

// contextError maps a context's error to Canceled or DeadlineExceeded (keeping it unwrappable).
func contextError(t target, err error, msg string) *Error {
	code := CodeCanceled
	if errors.Is(err, context.DeadlineExceeded) {
		code = CodeDeadlineExceeded
	}
	if msg == "" {
		msg = err.Error()
	}
	e := t.err(code, msg)
	e.Err = err
	return e
}

// gatewayError maps an error of a gateway call (a *connect.Error with the gateway's code and
// details) onto an *Error, as the gateway's table says.
func gatewayError(err error, t target) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return contextError(t, err, "")
		}
		e := t.err(CodeUnavailable, err.Error())
		e.Err = err
		return e
	}
	e := t.err(CodeInternal, ce.Message())
	e.Err = err
	var failure *gatewayv1.Failure
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		switch m := v.(type) {
		case *gatewayv1.Failure:
			failure = m
			e.Reason = FailureReason(strings.TrimPrefix(m.GetReason().String(), "REASON_"))
		case *gatewayv1.RunNotReady:
			e.Phase, e.Mode = Phase(m.GetPhase()), Mode(m.GetMode())
		case *gatewayv1.HandlerError:
			e.Handler = &HandlerError{
				Type:         m.GetType(),
				Message:      m.GetMessage(),
				Traceback:    m.GetTraceback(),
				ExitCode:     int(m.GetExitCode()),
				InvocationID: m.GetInvocationId(),
			}
		}
	}
	e.RetryAfter = retryAfter(ce.Meta(), failure)
	switch ce.Code() {
	case connect.CodeUnauthenticated:
		e.Code = CodeUnauthenticated
	case connect.CodePermissionDenied:
		e.Code = CodePermissionDenied
	case connect.CodeNotFound:
		e.Code = CodeNotFound
	case connect.CodeFailedPrecondition:
		e.Code = CodeNotReady
	case connect.CodeResourceExhausted:
		switch e.Reason {
		case ReasonRequestTooLarge, ReasonResponseTooLarge:
			e.Code = CodeTooLarge
		default:
			e.Code = CodeBusy
			if e.Reason == "" {
				// The session's queue is the one refusal of this code without a Failure detail.
				e.Reason = ReasonSessionBusy
			}
			if e.RetryAfter <= 0 {
				e.RetryAfter = defaultBusyRetryWait
			}
		}
	case connect.CodeUnavailable:
		e.Code = CodeUnavailable
		if e.Reason == "" && e.RetryAfter == 0 {
			// Not the gateway's answer: the connection itself failed.
			e.Message = fmt.Sprintf("cannot reach the gateway (%s): %s", t.via, ce.Message())
			e.Hint = "check the gateway namespace (WithGatewayNamespace) and that its pods are ready, or pass WithGatewayURL"
			if strings.Contains(ce.Message(), "certificate") {
				e.Hint = "its certificate did not verify: pass the CA that signed it (WithCAFile; the chart publishes it in the ConfigMap <release>-gateway-ca)"
			}
		}
	case connect.CodeDeadlineExceeded:
		e.Code = CodeDeadlineExceeded
	case connect.CodeCanceled:
		e.Code = CodeCanceled
	case connect.CodeUnknown:
		if e.Handler != nil {
			e.Code = CodeHandlerError
		}
	case connect.CodeInvalidArgument:
		e.Code = CodeInvalidArgument
	case connect.CodeAlreadyExists:
		e.Code = CodeAlreadyExists
	}
	return e
}

// retryAfter reads Retry-After (seconds) from the error's metadata, else the Failure detail.
func retryAfter(meta http.Header, f *gatewayv1.Failure) time.Duration {
	if v := meta.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
	}
	if f != nil && f.GetRetryAfterSeconds() > 0 {
		return time.Duration(f.GetRetryAfterSeconds()) * time.Second
	}
	return 0
}

// kubeError maps an error of a Kubernetes API call onto an *Error, by HTTP status. resource is
// what the call was on (e.g. "runs.kruntimes.io"), verb the RBAC verb, for the advice.
func kubeError(err error, t target, verb, resource string) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return contextError(t, err, "")
	}
	e := t.err(CodeInternal, err.Error())
	e.Err = err
	status, ok := err.(apierrors.APIStatus)
	if !ok && !errors.As(err, &status) {
		e.Code = CodeUnavailable
		e.Hint = "check that the Kubernetes API server in your kubeconfig is reachable"
		return e
	}
	s := status.Status()
	e.Message = s.Message
	switch {
	case apierrors.IsNotFound(err):
		e.Code = CodeNotFound
	case apierrors.IsForbidden(err):
		e.Code = CodePermissionDenied
		if resource != "" {
			e.Hint = fmt.Sprintf("ask for a Role granting %s on %s in namespace %q (see docs/sdk/go.md#rbac)", verb, resource, t.namespace)
		}
	case apierrors.IsUnauthorized(err):
		e.Code = CodeUnauthenticated
		e.Hint = "the kubeconfig's credentials were rejected; refresh them"
	case apierrors.IsAlreadyExists(err):
		e.Code = CodeAlreadyExists
	case apierrors.IsConflict(err):
		e.Code = CodeConflict
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		e.Code = CodeInvalidArgument
	case apierrors.IsTooManyRequests(err):
		e.Code = CodeBusy
		e.RetryAfter = defaultBusyRetryWait
		if secs, ok := apierrors.SuggestsClientDelay(err); ok && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		e.Code = CodeDeadlineExceeded
	case apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err):
		e.Code = CodeUnavailable
	}
	return e
}
