package kruntimes

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RunBuilder builds the Run that [Client.CreateRun] creates. [TaskSpec], [FunctionSpec] and
// [SessionSpec] build one from a few fields and check it the way the API would; a *[Run] you
// wrote yourself builds as itself.
type RunBuilder interface {
	// BuildRun returns the Run to create in namespace, or an *Error with CodeInvalidArgument.
	BuildRun(namespace string) (*Run, error)
}

// Bounds the API enforces, checked before sending so mistakes are reported with the field name.
const (
	maxInlineSource = 256 * 1024
	maxAttempts     = 10
	maxEnvVars      = 128
)

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	runtimeRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	handlerRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$.]*$`)
)

// TaskSpec builds a task Run: a script or command run once to completion. Give exactly one
// input: Script (a standalone script run by the Runtime's interpreter), Entrypoint (a script
// file in the runtime container, with Args), or Args alone (shell command lines, for bash).
type TaskSpec struct {
	// Runtime names the Runtime (e.g. "bash", "python"). Required.
	Runtime string
	// Script is a standalone script (spec.source.inline); it takes no arguments: use Env.
	Script string
	// Entrypoint is a script file in the runtime container.
	Entrypoint string
	// Args are Entrypoint's arguments, or without it shell command lines run in order.
	Args []string
	// Name of the Run; empty: generated from the Runtime's name.
	Name string
	// Env are environment variables of the task.
	Env map[string]string
	// Timeout bounds one attempt (0: no limit).
	Timeout time.Duration
	// Retries is how many more attempts a failed one gets (0–9), for the reasons in RetryOn
	// (default: failures of the pod, not of the code).
	Retries int
	// RetryOn lists the failure reasons that are retried (e.g. "NonZeroExit", "Timeout").
	RetryOn []string
	// TTL deletes the Run this long after it ended (0: keep it).
	TTL time.Duration
	// Labels and Annotations are put on the Run.
	Labels, Annotations map[string]string
	// Requests are logical resources the task holds on its pod ("runs": 1 unless given).
	Requests map[string]int64
}

// FunctionSpec builds a function Run: Source defines a handler that serves invocations through
// the gateway while the Run is Ready (see docs/concepts/functions-handlers.md).
type FunctionSpec struct {
	// Runtime names the Runtime (e.g. "python", "bash"). Required.
	Runtime string
	// Source is the module (python) or script (bash) that defines the handler. Required.
	Source string
	// Handler is the function's name in Source (default "handler").
	Handler string
	// Concurrency is how many invocations are served at once (default 1, at most 64).
	Concurrency int
	// IdleTimeout ends the Run after this long without an invocation (0: never).
	IdleTimeout time.Duration
	// InvocationTimeout is the default and longest time of one invocation (default 30s).
	InvocationTimeout time.Duration
	// MaxRequestBytes and MaxResponseBytes bound the bodies (default 1 MiB, at most 16 MiB).
	MaxRequestBytes, MaxResponseBytes int
	// Name of the Run; empty: generated from the Runtime's name.
	Name string
	// Env are environment variables of the handler's workers.
	Env map[string]string
	// Timeout bounds the Run's whole lifetime (0: no limit).
	Timeout time.Duration
	// Retries is how many more registrations a failed one gets (0–9), for RetryOn's reasons.
	Retries int
	// RetryOn lists the failure reasons that are retried (e.g. "RegistrationFailed").
	RetryOn []string
	// TTL deletes the Run this long after it ended (0: keep it).
	TTL time.Duration
	// Labels and Annotations are put on the Run.
	Labels, Annotations map[string]string
	// Requests are logical resources the function holds on its pod while registered.
	Requests map[string]int64
}

// SessionSpec builds a session Run: an exclusive, stateful workspace on a warm pod, driven
// through the gateway (exec, files, processes) until closed or cancelled.
type SessionSpec struct {
	// Runtime names the Runtime (default "bash").
	Runtime string
	// IdleTimeout drains the session after this long without an operation (0: never).
	IdleTimeout time.Duration
	// DefaultOperationTimeout applies to operations that ask for none (default 5m).
	DefaultOperationTimeout time.Duration
	// MaxOperationTimeout is the longest an operation may ask for (default and at most 60m).
	MaxOperationTimeout time.Duration
	// MaxQueuedOperations is how many mutations may wait behind the running one (default 64).
	MaxQueuedOperations int
	// Name of the Run; empty: generated ("<runtime>-session-…").
	Name string
	// Timeout bounds the session's whole lifetime (0: no limit).
	Timeout time.Duration
	// TTL deletes the Run this long after it ended (0: keep it).
	TTL time.Duration
	// Env is the base environment of every operation (a Command's Env adds to it).
	Env map[string]string
	// Labels and Annotations are put on the Run.
	Labels, Annotations map[string]string
}

// common are the fields every spec has.
type common struct {
	name, generateName  string
	env                 map[string]string
	timeout, ttl        time.Duration
	retries             int
	retryOn             []string
	labels, annotations map[string]string
	requests            map[string]int64
}

func invalid(format string, a ...any) error {
	return &Error{Code: CodeInvalidArgument, Op: "build run", Message: fmt.Sprintf(format, a...)}
}

// BuildRun implements [RunBuilder].
func (s TaskSpec) BuildRun(namespace string) (*Run, error) {
	if s.Script != "" && (s.Entrypoint != "" || len(s.Args) > 0) {
		return nil, invalid("Script is a standalone script: it takes no Entrypoint or Args (pass values through Env), or drop Script and name a script file in Entrypoint")
	}
	if s.Script == "" && s.Entrypoint == "" && len(s.Args) == 0 {
		return nil, invalid("a task needs an input: Script (a script), Entrypoint (a script file) or Args (shell command lines)")
	}
	run, err := buildBase(namespace, s.Runtime, common{
		name: s.Name, generateName: s.Runtime + "-", env: s.Env, timeout: s.Timeout, ttl: s.TTL,
		retries: s.Retries, retryOn: s.RetryOn, labels: s.Labels, annotations: s.Annotations, requests: s.Requests,
	})
	if err != nil {
		return nil, err
	}
	run.Spec.Mode.Task = &TaskMode{Entrypoint: s.Entrypoint, Args: slices.Clone(s.Args)}
	if s.Script != "" {
		if err := checkSource("Script", s.Script); err != nil {
			return nil, err
		}
		run.Spec.Source = &Source{Inline: s.Script}
	}
	return run, nil
}

// BuildRun implements [RunBuilder].
func (s FunctionSpec) BuildRun(namespace string) (*Run, error) {
	if s.Source == "" {
		return nil, invalid("a function needs Source: the module (python) or script (bash) that defines the handler")
	}
	if err := checkSource("Source", s.Source); err != nil {
		return nil, err
	}
	if s.Handler != "" && !handlerRE.MatchString(s.Handler) {
		return nil, invalid("Handler %q is not a function name", s.Handler)
	}
	if s.Concurrency < 0 || s.Concurrency > 64 {
		return nil, invalid("Concurrency %d must be from 1 to 64 (0: the default, 1)", s.Concurrency)
	}
	const maxBytes = 16 * 1024 * 1024
	if s.MaxRequestBytes < 0 || s.MaxRequestBytes > maxBytes || s.MaxResponseBytes < 0 || s.MaxResponseBytes > maxBytes {
		return nil, invalid("MaxRequestBytes and MaxResponseBytes must be at most 16 MiB (0: the default, 1 MiB)")
	}
	if s.InvocationTimeout > 15*time.Minute {
		return nil, invalid("InvocationTimeout %s must be at most 15m", s.InvocationTimeout)
	}
	run, err := buildBase(namespace, s.Runtime, common{
		name: s.Name, generateName: s.Runtime + "-", env: s.Env, timeout: s.Timeout, ttl: s.TTL,
		retries: s.Retries, retryOn: s.RetryOn, labels: s.Labels, annotations: s.Annotations, requests: s.Requests,
	})
	if err != nil {
		return nil, err
	}
	fm := &FunctionMode{
		Handler:          s.Handler,
		Concurrency:      int32(s.Concurrency),
		MaxRequestBytes:  int32(s.MaxRequestBytes),
		MaxResponseBytes: int32(s.MaxResponseBytes),
	}
	if fm.IdleTimeout, err = optDuration("IdleTimeout", s.IdleTimeout); err != nil {
		return nil, err
	}
	if fm.InvocationTimeout, err = optDuration("InvocationTimeout", s.InvocationTimeout); err != nil {
		return nil, err
	}
	run.Spec.Mode.Function = fm
	run.Spec.Source = &Source{Inline: s.Source}
	return run, nil
}

// BuildRun implements [RunBuilder].
func (s SessionSpec) BuildRun(namespace string) (*Run, error) {
	rt := s.Runtime
	if rt == "" {
		rt = "bash"
	}
	if s.MaxQueuedOperations < 0 || s.MaxQueuedOperations > 1024 {
		return nil, invalid("MaxQueuedOperations %d must be from 1 to 1024 (0: the default, 64)", s.MaxQueuedOperations)
	}
	if s.MaxOperationTimeout > time.Hour {
		return nil, invalid("MaxOperationTimeout %s must be at most 60m", s.MaxOperationTimeout)
	}
	if s.DefaultOperationTimeout > 0 && s.MaxOperationTimeout > 0 && s.DefaultOperationTimeout > s.MaxOperationTimeout {
		return nil, invalid("DefaultOperationTimeout %s must not exceed MaxOperationTimeout %s", s.DefaultOperationTimeout, s.MaxOperationTimeout)
	}
	run, err := buildBase(namespace, rt, common{
		name: s.Name, generateName: rt + "-session-", env: s.Env, timeout: s.Timeout, ttl: s.TTL,
		labels: s.Labels, annotations: s.Annotations,
	})
	if err != nil {
		return nil, err
	}
	sm := &SessionMode{MaxQueuedOperations: int32(s.MaxQueuedOperations)}
	for _, d := range []struct {
		field string
		v     time.Duration
		out   *string
	}{
		{"IdleTimeout", s.IdleTimeout, &sm.IdleTimeout},
		{"DefaultOperationTimeout", s.DefaultOperationTimeout, &sm.DefaultOperationTimeout},
		{"MaxOperationTimeout", s.MaxOperationTimeout, &sm.MaxOperationTimeout},
	} {
		if *d.out, err = optDuration(d.field, d.v); err != nil {
			return nil, err
		}
	}
	run.Spec.Mode.Session = sm
	return run, nil
}

// BuildRun implements [RunBuilder]: the Run as written, in namespace when it names none.
func (r *Run) BuildRun(namespace string) (*Run, error) {
	out := r.DeepCopy()
	if out.Namespace == "" {
		out.Namespace = namespace
	}
	out.APIVersion, out.Kind = APIVersion, RunKind
	return out, nil
}

// DeepCopy returns a copy of r that shares nothing with it.
func (r *Run) DeepCopy() *Run {
	out := *r
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	s := &out.Spec
	if s.Mode.Task != nil {
		t := *s.Mode.Task
		t.Args = slices.Clone(t.Args)
		s.Mode.Task = &t
	}
	if s.Mode.Function != nil {
		f := *s.Mode.Function
		s.Mode.Function = &f
	}
	if s.Mode.Session != nil {
		x := *s.Mode.Session
		s.Mode.Session = &x
	}
	if s.Source != nil {
		x := *s.Source
		s.Source = &x
	}
	s.Env = slices.Clone(s.Env)
	if s.RetryPolicy != nil {
		p := *s.RetryPolicy
		p.RetryOn = slices.Clone(p.RetryOn)
		if p.Backoff != nil {
			b := *p.Backoff
			p.Backoff = &b
		}
		s.RetryPolicy = &p
	}
	if s.Resources != nil {
		s.Resources = &Resources{Requests: maps.Clone(s.Resources.Requests)}
	}
	if s.TTLSecondsAfterFinished != nil {
		v := *s.TTLSecondsAfterFinished
		s.TTLSecondsAfterFinished = &v
	}
	if s.Termination != nil {
		t := *s.Termination
		s.Termination = &t
	}
	st := &out.Status
	if st.Assignment != nil {
		a := *st.Assignment
		st.Assignment = &a
	}
	if st.ExitCode != nil {
		v := *st.ExitCode
		st.ExitCode = &v
	}
	st.Outputs = maps.Clone(st.Outputs)
	st.ArtifactRefs = slices.Clone(st.ArtifactRefs)
	if st.Endpoint != nil {
		e := *st.Endpoint
		st.Endpoint = &e
	}
	if st.Timing != nil {
		t := *st.Timing
		st.Timing = &t
	}
	st.Conditions = make([]metav1.Condition, len(r.Status.Conditions))
	for i := range r.Status.Conditions {
		r.Status.Conditions[i].DeepCopyInto(&st.Conditions[i])
	}
	if r.Status.Conditions == nil {
		st.Conditions = nil
	}
	return &out
}

func buildBase(namespace, runtime string, c common) (*Run, error) {
	if runtime == "" {
		return nil, invalid("Runtime is required (e.g. \"bash\" or \"python\"; list them with `krt runtime list`)")
	}
	if !runtimeRE.MatchString(runtime) || len(runtime) > 63 {
		return nil, invalid("Runtime %q is not a Runtime name", runtime)
	}
	run := &Run{
		TypeMeta:   metav1.TypeMeta{APIVersion: APIVersion, Kind: RunKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Labels: maps.Clone(c.labels), Annotations: maps.Clone(c.annotations)},
		Spec:       RunSpec{Runtime: runtime},
	}
	if c.name != "" {
		if !nameRE.MatchString(c.name) || len(c.name) > 253 {
			return nil, invalid("Name %q is not a valid name: lower-case letters, digits, '-' and '.'", c.name)
		}
		run.Name = c.name
	} else {
		run.GenerateName = c.generateName
	}
	if len(c.env) > maxEnvVars {
		return nil, invalid("Env has %d variables, more than the %d a Run may have", len(c.env), maxEnvVars)
	}
	for _, k := range slices.Sorted(maps.Keys(c.env)) {
		if !envNameRE.MatchString(k) {
			return nil, invalid("Env name %q: letters, digits and '_', not starting with a digit", k)
		}
		run.Spec.Env = append(run.Spec.Env, EnvVar{Name: k, Value: c.env[k]})
	}
	var err error
	if run.Spec.Timeout, err = optDuration("Timeout", c.timeout); err != nil {
		return nil, err
	}
	if c.retries < 0 || c.retries > maxAttempts-1 {
		return nil, invalid("Retries %d must be from 0 to %d", c.retries, maxAttempts-1)
	}
	if c.retries > 0 || len(c.retryOn) > 0 {
		run.Spec.RetryPolicy = &RetryPolicy{MaxAttempts: int32(c.retries + 1), RetryOn: slices.Clone(c.retryOn)}
	}
	if c.ttl < 0 {
		return nil, invalid("TTL %s must not be negative", c.ttl)
	}
	if c.ttl > 0 {
		secs := int32((c.ttl + time.Second - 1) / time.Second)
		run.Spec.TTLSecondsAfterFinished = &secs
	}
	if len(c.requests) > 0 {
		run.Spec.Resources = &Resources{Requests: maps.Clone(c.requests)}
	}
	return run, nil
}

func checkSource(field, src string) error {
	if n := utf8.RuneCountInString(src); n > maxInlineSource {
		return invalid("%s has %d characters, more than the %d an inline source may hold", field, n, maxInlineSource)
	}
	return nil
}

// optDuration writes d as the API's Go-style duration string ("" for 0).
func optDuration(field string, d time.Duration) (string, error) {
	if d == 0 {
		return "", nil
	}
	if d < time.Millisecond {
		return "", invalid("%s %s must be at least 1ms (0: unset)", field, d)
	}
	// "1h30m0s" → "1h30m": the shortest form, as people write it in manifests.
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s, nil
}
