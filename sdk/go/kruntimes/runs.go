package kruntimes

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// RunsResource is the Run custom resource's group, version and plural.
var RunsResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "runs"}

const runsResourceName = "runs.kruntimes.io"

func (c *Client) runs() dynamic.ResourceInterface {
	return c.dyn.Resource(RunsResource).Namespace(c.namespace)
}

func (c *Client) target(op, run string) target {
	return target{op: op, namespace: c.namespace, run: run}
}

func runFrom(u *unstructured.Unstructured) (*Run, error) {
	var r Run
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
		return nil, &Error{Code: CodeInternal, Op: "decode run", Run: u.GetName(), Message: err.Error(), Err: err}
	}
	return &r, nil
}

// CreateRun creates the Run that b builds (a [TaskSpec], [FunctionSpec], [SessionSpec] or a
// *[Run]) in the client's namespace and returns it as created (with its generated name). It
// does not wait: see [Client.WaitRun], [Client.WaitReady], [Client.TaskResult].
func (c *Client) CreateRun(ctx context.Context, b RunBuilder) (*Run, error) {
	run, err := b.BuildRun(c.namespace)
	if err != nil {
		return nil, err
	}
	if run.Namespace != c.namespace {
		return c.InNamespace(run.Namespace).CreateRun(ctx, run)
	}
	if run.Annotations == nil {
		run.Annotations = map[string]string{}
	}
	if _, ok := run.Annotations[CreatedMicrosAnnotation]; !ok {
		run.Annotations[CreatedMicrosAnnotation] = strconv.FormatInt(time.Now().UnixMicro(), 10)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(run)
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "create run", Message: err.Error(), Err: err}
	}
	// The status is the controller's; an empty one would only be dropped by the API.
	delete(obj, "status")
	name := run.Name
	if name == "" {
		name = run.GenerateName + "…"
	}
	u, err := c.runs().Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		return nil, kubeError(err, c.target("create run", name), "create", runsResourceName)
	}
	return runFrom(u)
}

// GetRun reads a Run. A missing one is an *Error with CodeNotFound.
func (c *Client) GetRun(ctx context.Context, name string) (*Run, error) {
	u, err := c.runs().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, kubeError(err, c.target("get run", name), "get", runsResourceName)
	}
	return runFrom(u)
}

// ListRuns lists the Runs of the client's namespace, optionally narrowed by a label selector
// ("" for all).
func (c *Client) ListRuns(ctx context.Context, labelSelector string) ([]Run, error) {
	list, err := c.runs().List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
	if err != nil {
		return nil, kubeError(err, c.target("list runs", ""), "list", runsResourceName)
	}
	out := make([]Run, 0, len(list.Items))
	for i := range list.Items {
		r, err := runFrom(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// Condition is what [Client.WaitRun] waits for, besides the end of the Run.
type Condition func(*Run) bool

// InPhase is a [Condition]: the Run is in one of phases.
func InPhase(phases ...Phase) Condition {
	return func(r *Run) bool {
		for _, p := range phases {
			if r.Status.Phase == p {
				return true
			}
		}
		return false
	}
}

// ConditionTrue is a [Condition]: the Run's status condition of that type is True (e.g.
// "Scheduled", "Ready").
func ConditionTrue(condType string) Condition {
	return func(r *Run) bool {
		for _, c := range r.Status.Conditions {
			if c.Type == condType && c.Status == metav1.ConditionTrue {
				return true
			}
		}
		return false
	}
}

// WaitRun waits until the Run has ended or any of until holds, and returns it then. It reads
// the Run once and then watches it from that resourceVersion (no polling), re-establishing the
// watch when the server ends it. ctx bounds the wait: when it ends first, the error is an *Error
// with CodeDeadlineExceeded (or CodeCanceled) that also matches ctx.Err() with errors.Is; the
// Run keeps going. A Run deleted while waiting is CodeNotFound.
func (c *Client) WaitRun(ctx context.Context, name string, until ...Condition) (*Run, error) {
	return c.waitRun(ctx, name, nil, until...)
}

func (c *Client) waitRun(ctx context.Context, name string, seen func(*Run), until ...Condition) (*Run, error) {
	t := c.target("wait for run", name)
	done := func(r *Run) bool {
		if seen != nil {
			seen(r)
		}
		if r.Terminal() {
			return true
		}
		for _, u := range until {
			if u(r) {
				return true
			}
		}
		return false
	}
	var last *Run
	timedOut := func(err error) error {
		phase := PhasePending
		if last != nil && last.Status.Phase != "" {
			phase = last.Status.Phase
		}
		what := "finish"
		if len(until) > 0 {
			what = "get there"
		}
		e := contextError(t, err, fmt.Sprintf("run %q did not %s before the context ended (phase %s)", name, what, phase))
		e.Hint = "it keeps running; wait again, or cancel it with CancelRun"
		return e
	}
	rv := ""
	for {
		if rv == "" {
			r, err := c.GetRun(ctx, name)
			if err != nil {
				if ctx.Err() != nil {
					return nil, timedOut(ctx.Err())
				}
				return nil, err
			}
			last = r
			if done(r) {
				return r, nil
			}
			rv = r.ResourceVersion
		}
		w, err := c.runs().Watch(ctx, metav1.ListOptions{
			FieldSelector:       "metadata.name=" + name,
			ResourceVersion:     rv,
			AllowWatchBookmarks: true,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, timedOut(ctx.Err())
			}
			if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
				rv = ""
				continue
			}
			return nil, kubeError(err, t, "watch", runsResourceName)
		}
		r, next, err := c.consume(ctx, w, name, done, &last)
		w.Stop()
		if r != nil || err != nil {
			if err != nil && ctx.Err() != nil {
				return nil, timedOut(ctx.Err())
			}
			return r, err
		}
		if ctx.Err() != nil {
			return nil, timedOut(ctx.Err())
		}
		// The server ended the watch: resume from the last version seen, or read again.
		rv = next
	}
}

// consume reads one watch until done holds (the Run), the Run is deleted (an error), or the
// watch ends (nil, the resourceVersion to resume from: "" to read the Run again).
func (c *Client) consume(ctx context.Context, w watch.Interface, name string, done func(*Run) bool, last **Run) (*Run, string, error) {
	rv := ""
	if *last != nil {
		rv = (*last).ResourceVersion
	}
	for {
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, rv, nil
			}
			switch ev.Type {
			case watch.Bookmark:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetResourceVersion() != "" {
					rv = u.GetResourceVersion()
				}
			case watch.Deleted:
				e := c.target("wait for run", name).err(CodeNotFound, fmt.Sprintf("run %q was deleted while waiting for it", name))
				return nil, "", e
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
					return nil, "", nil
				}
				return nil, "", kubeError(err, c.target("wait for run", name), "watch", runsResourceName)
			case watch.Added, watch.Modified:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				r, err := runFrom(u)
				if err != nil {
					return nil, "", err
				}
				*last, rv = r, r.ResourceVersion
				if done(r) {
					return r, "", nil
				}
			}
		}
	}
}

// WaitReady waits until a function or session Run is Ready and returns it. A Run that ends
// before it is Ready is an *Error with CodeRunEnded (its Phase and Message say why).
func (c *Client) WaitReady(ctx context.Context, name string) (*Run, error) {
	r, err := c.WaitRun(ctx, name, InPhase(PhaseReady))
	if err != nil {
		return nil, err
	}
	if r.Status.Phase != PhaseReady {
		return r, runEnded(c.target("wait for ready", name), r)
	}
	return r, nil
}

func runEnded(t target, r *Run) *Error {
	msg := fmt.Sprintf("run %q ended %s", r.Name, r.Status.Phase)
	if r.Status.Reason != "" {
		msg += " (" + r.Status.Reason + ")"
	}
	msg += " before it was Ready"
	if r.Status.Message != "" {
		msg += ": " + r.Status.Message
	}
	e := t.err(CodeRunEnded, msg)
	e.Phase, e.Mode = r.Status.Phase, r.Mode()
	e.Hint = "see its status (krt describe " + r.Name + ") and create a new Run"
	return e
}

// CancelRun asks the Run to stop now (spec.termination.mode Immediate) and returns it as
// patched; the Run then ends Cancelled (unless it ended first). Cancelling an ended Run does
// nothing.
func (c *Client) CancelRun(ctx context.Context, name string) (*Run, error) {
	return c.terminate(ctx, name, TerminationImmediate)
}

// terminate sets spec.termination.mode, moving forward only (unset → Drain → Immediate); a Run
// already at or past that mode, or ended, is returned as it is.
func (c *Client) terminate(ctx context.Context, name string, mode TerminationMode) (*Run, error) {
	op := "cancel run"
	if mode == TerminationDrain {
		op = "close session"
	}
	r, err := c.GetRun(ctx, name)
	if err != nil {
		return nil, err
	}
	if r.Terminal() || (r.Spec.Termination != nil && (r.Spec.Termination.Mode == mode || r.Spec.Termination.Mode == TerminationImmediate)) {
		return r, nil
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"termination": map[string]any{"mode": mode}}})
	u, err := c.runs().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, kubeError(err, c.target(op, name), "patch", runsResourceName)
	}
	return runFrom(u)
}

// DeleteRun deletes the Run. A function or session Run finishes its in-flight calls first (its
// finalizer); a missing Run is an *Error with CodeNotFound.
func (c *Client) DeleteRun(ctx context.Context, name string) error {
	err := c.runs().Delete(ctx, name, metav1.DeleteOptions{})
	return kubeError(err, c.target("delete run", name), "delete", runsResourceName)
}

// TaskResult waits until the task Run has ended and returns its result. ctx bounds the wait.
func (c *Client) TaskResult(ctx context.Context, name string) (*TaskResult, error) {
	r, err := c.WaitRun(ctx, name)
	if err != nil {
		return nil, err
	}
	return r.Result(), nil
}

// RunTask creates a task Run, waits until it has ended and returns its result: the quickest way
// to run a script. A task that fails is not an error (see [TaskResult.Succeeded]); errors are
// the API's refusals and ctx ending.
func (c *Client) RunTask(ctx context.Context, spec TaskSpec) (*TaskResult, error) {
	r, err := c.CreateRun(ctx, spec)
	if err != nil {
		return nil, err
	}
	return c.TaskResult(ctx, r.Name)
}
