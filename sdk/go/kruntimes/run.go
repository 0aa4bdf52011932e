package kruntimes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// API coordinates of the Run custom resource.
const (
	// Group is the API group of Runs and Runtimes.
	Group = "kruntimes.io"
	// Version is the API version of Runs.
	Version = "v1alpha1"
	// APIVersion is Group/Version, as in a Run's apiVersion.
	APIVersion = Group + "/" + Version
	// RunKind is the kind of a Run.
	RunKind = "Run"
	// CreatedMicrosAnnotation is set by CreateRun to the wall-clock microseconds of the create;
	// the controller copies it into status.timing.createdMicros.
	CreatedMicrosAnnotation = "kruntimes.io/created-micros"
	// RuntimeLabel is on a Runtime's pods (and on Runs): the Runtime's name.
	RuntimeLabel = "kruntimes.io/runtime"
)

// Phase is where a Run is in its lifecycle (status.phase).
type Phase string

// The phases. Succeeded, Failed, Timeout and Cancelled are terminal.
const (
	PhasePending    Phase = "Pending"
	PhaseScheduled  Phase = "Scheduled"
	PhaseRunning    Phase = "Running"
	PhaseReady      Phase = "Ready"
	PhaseFinalizing Phase = "Finalizing"
	PhaseSucceeded  Phase = "Succeeded"
	PhaseFailed     Phase = "Failed"
	PhaseTimeout    Phase = "Timeout"
	PhaseCancelled  Phase = "Cancelled"
)

// Terminal reports whether the phase is final (Succeeded, Failed, Timeout, Cancelled).
func (p Phase) Terminal() bool {
	switch p {
	case PhaseSucceeded, PhaseFailed, PhaseTimeout, PhaseCancelled:
		return true
	}
	return false
}

// Mode is how a Run uses its pod.
type Mode string

// The modes.
const (
	ModeTask     Mode = "task"
	ModeFunction Mode = "function"
	ModeSession  Mode = "session"
)

// TerminationMode asks a Run to end (spec.termination.mode).
type TerminationMode string

// The termination modes. They move forward only: unset → Drain → Immediate.
const (
	// TerminationImmediate cancels the Run now.
	TerminationImmediate TerminationMode = "Immediate"
	// TerminationDrain (sessions only) finishes accepted operations, accepts nothing new, ends.
	TerminationDrain TerminationMode = "Drain"
)

// Run is the kruntimes.io/v1alpha1 Run custom resource: a task, function or session placed on a
// warm pod of a Runtime. Every field is documented in docs/concepts/api.md.
type Run struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is what to execute and how.
	Spec RunSpec `json:"spec"`
	// Status is written by the controller and by runtimed on the Run's pod.
	Status RunStatus `json:"status,omitempty"`
}

// Mode reports which of spec.mode.task, function or session is set.
func (r *Run) Mode() Mode {
	switch {
	case r.Spec.Mode.Function != nil:
		return ModeFunction
	case r.Spec.Mode.Session != nil:
		return ModeSession
	}
	return ModeTask
}

// Terminal reports whether the Run has ended.
func (r *Run) Terminal() bool { return r.Status.Phase.Terminal() }

// RunSpec is the desired state of a Run. Everything that affects execution is immutable after
// creation; only TTLSecondsAfterFinished and Termination (forward only) may change.
type RunSpec struct {
	// Runtime names the Runtime, in the Run's namespace, whose pods execute the Run.
	Runtime string `json:"runtime"`
	// Mode holds exactly one of Task, Function or Session.
	Mode RunModeSpec `json:"mode"`
	// Source is the inline code: a task's script, or a function's module.
	Source *Source `json:"source,omitempty"`
	// Env are environment variables of the attempt.
	Env []EnvVar `json:"env,omitempty"`
	// Timeout is a Go-style duration ("30s"): a task's attempt, or a function's or session's
	// whole lifetime.
	Timeout string `json:"timeout,omitempty"`
	// RetryPolicy says when a failed attempt is retried.
	RetryPolicy *RetryPolicy `json:"retryPolicy,omitempty"`
	// Resources are the logical resources one attempt holds on its pod.
	Resources *Resources `json:"resources,omitempty"`
	// TTLSecondsAfterFinished deletes the Run this long after it ended.
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// Termination asks the Run to end.
	Termination *Termination `json:"termination,omitempty"`
}

// RunModeSpec is spec.mode: exactly one field is set.
type RunModeSpec struct {
	// Task runs once to completion.
	Task *TaskMode `json:"task,omitempty"`
	// Function serves invocations through the gateway while Ready.
	Function *FunctionMode `json:"function,omitempty"`
	// Session holds an exclusive workspace driven through the gateway.
	Session *SessionMode `json:"session,omitempty"`
}

// TaskMode is spec.mode.task.
type TaskMode struct {
	// Entrypoint is a script file in the runtime container (not with Source).
	Entrypoint string `json:"entrypoint,omitempty"`
	// Args are the entrypoint's arguments, or, without Entrypoint, shell command lines.
	Args []string `json:"args,omitempty"`
}

// FunctionMode is spec.mode.function.
type FunctionMode struct {
	// Handler is the name of the function in Source that serves invocations (default "handler").
	Handler string `json:"handler,omitempty"`
	// IdleTimeout ends the Run after this long without an invocation (a duration string).
	IdleTimeout string `json:"idleTimeout,omitempty"`
	// Concurrency is how many invocations run at once (default 1).
	Concurrency int32 `json:"concurrency,omitempty"`
	// MaxRequestBytes bounds the request body (default 1 MiB).
	MaxRequestBytes int32 `json:"maxRequestBytes,omitempty"`
	// MaxResponseBytes bounds the response body (default 1 MiB).
	MaxResponseBytes int32 `json:"maxResponseBytes,omitempty"`
	// InvocationTimeout is the default and longest time of one invocation (a duration string).
	InvocationTimeout string `json:"invocationTimeout,omitempty"`
}

// SessionMode is spec.mode.session.
type SessionMode struct {
	// IdleTimeout drains the session after this long without an operation.
	IdleTimeout string `json:"idleTimeout,omitempty"`
	// DefaultOperationTimeout applies to operations that ask for none (default 5m).
	DefaultOperationTimeout string `json:"defaultOperationTimeout,omitempty"`
	// MaxOperationTimeout is the longest an operation may ask for (default and maximum 60m).
	MaxOperationTimeout string `json:"maxOperationTimeout,omitempty"`
	// MaxQueuedOperations is how many mutations may wait behind the running one (default 64).
	MaxQueuedOperations int32 `json:"maxQueuedOperations,omitempty"`
}

// Source is spec.source.
type Source struct {
	// Inline is the code itself.
	Inline string `json:"inline"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	// Name is letters, digits and '_', not starting with a digit.
	Name string `json:"name"`
	// Value may be empty.
	Value string `json:"value"`
}

// RetryPolicy is spec.retryPolicy.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included.
	MaxAttempts int32 `json:"maxAttempts,omitempty"`
	// Backoff is the delay between attempts.
	Backoff *Backoff `json:"backoff,omitempty"`
	// RetryOn lists the failure reasons that start another attempt.
	RetryOn []string `json:"retryOn,omitempty"`
}

// Backoff is spec.retryPolicy.backoff.
type Backoff struct {
	// Initial is the delay before the second attempt (default "1s").
	Initial string `json:"initial,omitempty"`
	// Max caps the delay between attempts (default "5m").
	Max string `json:"max,omitempty"`
	// Multiplier grows the delay after each retry (default 2).
	Multiplier float64 `json:"multiplier,omitempty"`
}

// Resources is spec.resources.
type Resources struct {
	// Requests are logical resources out of the Runtime's capacity ("runs" is 1 unless given).
	Requests map[string]int64 `json:"requests,omitempty"`
}

// Termination is spec.termination.
type Termination struct {
	// Mode is Immediate or (sessions) Drain.
	Mode TerminationMode `json:"mode"`
}

// RunStatus is the observed state of a Run.
type RunStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is where the Run is in its lifecycle.
	Phase Phase `json:"phase,omitempty"`
	// Reason says why it is in that phase (a closed set, e.g. "NonZeroExit", "IdleTimeout").
	Reason string `json:"reason,omitempty"`
	// Message says it in words.
	Message string `json:"message,omitempty"`
	// WaitingReason says why a Pending Run has no pod yet.
	WaitingReason string `json:"waitingReason,omitempty"`
	// Attempt is the current (or last) attempt, from 1.
	Attempt int32 `json:"attempt,omitempty"`
	// Assignment is where the current attempt runs.
	Assignment *Assignment `json:"assignment,omitempty"`
	// ExitCode is the task's exit code, when its process exited.
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Signal is the signal that ended the task's process.
	Signal string `json:"signal,omitempty"`
	// Outputs are the task's named results.
	Outputs map[string]string `json:"outputs,omitempty"`
	// StdoutTail is the last 16 KiB of the task's stdout.
	StdoutTail string `json:"stdoutTail,omitempty"`
	// StderrTail is the last 16 KiB of the task's stderr.
	StderrTail string `json:"stderrTail,omitempty"`
	// StdoutTruncated says StdoutTail holds only the end of a longer stdout.
	StdoutTruncated bool `json:"stdoutTruncated,omitempty"`
	// StderrTruncated says StderrTail holds only the end of a longer stderr.
	StderrTruncated bool `json:"stderrTruncated,omitempty"`
	// ArtifactRefs are the artifacts the Run stored.
	ArtifactRefs []ArtifactRef `json:"artifactRefs,omitempty"`
	// Endpoint is where a function or session is served while Ready.
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	// Timing holds microsecond timestamps of the current attempt.
	Timing *Timing `json:"timing,omitempty"`
	// Conditions: Scheduled, Finished; functions and sessions also Registered and Ready.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Assignment is status.assignment: the pod of the current attempt.
type Assignment struct {
	// Pod is the Runtime pod the attempt is bound to.
	Pod string `json:"pod"`
	// PodUID is that pod's UID.
	PodUID string `json:"podUID"`
	// Attempt is the attempt this assignment is for.
	Attempt int32 `json:"attempt"`
	// Node is the node the pod runs on.
	Node string `json:"node,omitempty"`
}

// Endpoint is status.endpoint: the pod serving a function or session.
type Endpoint struct {
	// Pod is the pod serving the Run.
	Pod string `json:"pod"`
	// PodUID is that pod's UID; the gateway's route is fenced on it.
	PodUID string `json:"podUID"`
	// Attempt is the registration serving.
	Attempt int32 `json:"attempt"`
	// Address is runtimed's dataplane host:port on that pod.
	Address string `json:"address,omitempty"`
	// ReadyMicros is when the Run became Ready there.
	ReadyMicros int64 `json:"readyMicros,omitempty"`
}

// Timing is status.timing, microseconds since the Unix epoch.
type Timing struct {
	// CreatedMicros is when the client created the Run (CreateRun sets it).
	CreatedMicros int64 `json:"createdMicros,omitempty"`
	// ScheduledMicros is when the scheduler bound the current attempt.
	ScheduledMicros int64 `json:"scheduledMicros,omitempty"`
	// StartedMicros is when the Runtime Server started the attempt.
	StartedMicros int64 `json:"startedMicros,omitempty"`
	// FinishedMicros is when the attempt's process exited.
	FinishedMicros int64 `json:"finishedMicros,omitempty"`
	// ReportedMicros is when runtimed wrote the terminal status.
	ReportedMicros int64 `json:"reportedMicros,omitempty"`
}

// ArtifactRef is a reference to an artifact a Run stored.
type ArtifactRef struct {
	// Name is unique within the Run.
	Name string `json:"name"`
	// Driver is the store that holds it: "s3" or "filesystem".
	Driver string `json:"driver"`
	// Type is "file", "archive" (a directory, as tar) or "log".
	Type string `json:"type"`
	// Location is s3://bucket/key, or a path in the filesystem store's claim.
	Location string `json:"location"`
	// Attempt is the attempt that produced it.
	Attempt int32 `json:"attempt,omitempty"`
	// Size in bytes.
	Size int64 `json:"size,omitempty"`
	// Digest is "sha256:<hex>".
	Digest string `json:"digest,omitempty"`
	// ContentType is its MIME type.
	ContentType string `json:"contentType,omitempty"`
	// Created is when it was stored (RFC 3339).
	Created string `json:"created,omitempty"`
}

// TaskResult is how a task Run ended: its phase and reason, exit code, outputs and the tails of
// its output. Get it with [Run.Result] or [Client.TaskResult].
type TaskResult struct {
	// Name is the Run's name.
	Name string
	// Phase is the Run's phase (terminal once it ended).
	Phase Phase
	// Reason and Message say why (e.g. "NonZeroExit", "the task exited with code 3").
	Reason, Message string
	// Attempt is the attempt this result is of.
	Attempt int
	// ExitCode is the process's exit code, or -1 when it did not exit (never started, killed
	// by a signal, still running).
	ExitCode int
	// Signal is the signal that ended the process, e.g. "SIGKILL".
	Signal string
	// Outputs are the key=value results the task appended to $KRUNTIME_OUTPUTS.
	Outputs map[string]string
	// Stdout and Stderr are the last 16 KiB of each stream (all output is in [Client.Logs]).
	Stdout, Stderr string
	// StdoutTruncated and StderrTruncated say a tail holds only the end of a longer stream.
	StdoutTruncated, StderrTruncated bool
}

// Succeeded reports whether the task exited 0.
func (r *TaskResult) Succeeded() bool { return r.Phase == PhaseSucceeded }

// Result reads the Run's status as a task result (meaningful once the Run is terminal).
func (r *Run) Result() *TaskResult {
	s := r.Status
	res := &TaskResult{
		Name:            r.Name,
		Phase:           s.Phase,
		Reason:          s.Reason,
		Message:         s.Message,
		Attempt:         int(s.Attempt),
		ExitCode:        -1,
		Signal:          s.Signal,
		Outputs:         s.Outputs,
		Stdout:          s.StdoutTail,
		Stderr:          s.StderrTail,
		StdoutTruncated: s.StdoutTruncated,
		StderrTruncated: s.StderrTruncated,
	}
	if res.Phase == "" {
		res.Phase = PhasePending
	}
	if s.ExitCode != nil {
		res.ExitCode = int(*s.ExitCode)
	}
	if res.Outputs == nil {
		res.Outputs = map[string]string{}
	}
	return res
}
