/**
 * Closed sets of strings shared by the schemas, the controller, runtimed and the CLI: Run phases,
 * Run reasons, condition types, modes. Each set is a const object (use `RunPhase.Running`) and a
 * type of the same name; the schemas' enums are built from these, so they cannot drift.
 */

export const RunPhase = {
  /** Accepted, waiting for a pod; `status.waitingReason` says why. */
  Pending: "Pending",
  /** Bound to a pod (`status.assignment`), not yet started there. */
  Scheduled: "Scheduled",
  /** Executing on its pod. */
  Running: "Running",
  /** A function or session is serving through `status.endpoint`. */
  Ready: "Ready",
  /** Execution ended; outputs, logs and artifacts are being recorded. */
  Finalizing: "Finalizing",
  Succeeded: "Succeeded",
  Failed: "Failed",
  Timeout: "Timeout",
  Cancelled: "Cancelled",
} as const;
export type RunPhase = (typeof RunPhase)[keyof typeof RunPhase];
export const RUN_PHASES = Object.values(RunPhase) as RunPhase[];

export const TERMINAL_PHASES: readonly RunPhase[] = [
  RunPhase.Succeeded,
  RunPhase.Failed,
  RunPhase.Timeout,
  RunPhase.Cancelled,
];

export function isTerminalPhase(phase: RunPhase | undefined): boolean {
  return phase !== undefined && TERMINAL_PHASES.includes(phase);
}

/** Why a Run is in the phase it is in (`status.reason`, condition reasons, `retryOn`). */
export const Reason = {
  RuntimeNotFound: "RuntimeNotFound",
  NoReadyPods: "NoReadyPods",
  InsufficientCapacity: "InsufficientCapacity",
  Unschedulable: "Unschedulable",
  WorkspaceUnavailable: "WorkspaceUnavailable",
  PodGone: "PodGone",
  PodTerminating: "PodTerminating",
  PodUnhealthy: "PodUnhealthy",
  ModeNotSupported: "ModeNotSupported",
  StartFailed: "StartFailed",
  NonZeroExit: "NonZeroExit",
  Signaled: "Signaled",
  OutputsInvalid: "OutputsInvalid",
  Timeout: "Timeout",
  Cancelled: "Cancelled",
  RetriesExhausted: "RetriesExhausted",
  Completed: "Completed",
  Drained: "Drained",
  ArtifactsRejected: "ArtifactsRejected",
  ArtifactUploadFailed: "ArtifactUploadFailed",
  ArtifactInputUnavailable: "ArtifactInputUnavailable",
  IdleTimeout: "IdleTimeout",
  RegistrationFailed: "RegistrationFailed",
  Registered: "Registered",
  Serving: "Serving",
  SessionLost: "SessionLost",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];
export const REASONS = Object.values(Reason) as Reason[];

/** What each reason means; rendered into the API reference. */
export const REASON_DESCRIPTIONS: Record<Reason, string> = {
  RuntimeNotFound: "Pending: the Runtime named in `spec.runtime` does not exist in the Run's namespace.",
  NoReadyPods: "Pending: the Runtime has no ready pod.",
  InsufficientCapacity:
    "Pending: every ready pod is using the capacity the Run requests; it waits for a release.",
  Unschedulable:
    "Pending: no pod can take the Run as it is — the request can never fit (it exceeds `spec.capacity` or names a resource the Runtime does not offer), or its required Run affinity or anti-affinity holds on no pod now (`status.message` names the term; it is placed once a matching Run is).",
  WorkspaceUnavailable:
    "Pending: the PersistentWorkspace named in `spec.workspace` cannot take the Run now — not found, not bound yet, Released, Lost, being deleted, or bound to another Runtime; `status.message` says which.",
  PodGone: "The assigned pod disappeared before the attempt finished.",
  PodTerminating: "The assigned pod began terminating before the attempt finished.",
  PodUnhealthy: "The assigned pod stopped heartbeating or failed its health checks.",
  ModeNotSupported: "The Runtime does not support the Run's mode (task, function or session).",
  StartFailed: "The Runtime Server could not start the attempt (missing entrypoint, bad interpreter, …).",
  NonZeroExit: "The task exited with a non-zero exit code (`status.exitCode`).",
  Signaled: "The task was killed by a signal kruntimes did not send (`status.signal`), e.g. the OOM killer.",
  OutputsInvalid: "The task wrote outputs that break the bounds of `status.outputs`.",
  Timeout: "An attempt ran longer than `spec.timeout`.",
  Cancelled: "`spec.termination.mode` was set to `Immediate` before the Run finished.",
  RetriesExhausted:
    "Every one of `spec.retryPolicy.maxAttempts` (more than one) attempts failed, the last with a reason in `retryOn`; the message names it, exit code and tails are the last attempt's.",
  Completed: "The task exited with code 0.",
  Drained: "A session finished gracefully after `spec.termination.mode: Drain`.",
  ArtifactsRejected:
    "The task left entries in `$KRUNTIME_ARTIFACTS_DIR` that break the artifact rules (symlinks, special files, bad names, count or size limits); none were stored.",
  ArtifactUploadFailed:
    "The artifacts could not be stored after retrying (the store was unreachable or refused them); the task's own result is kept in the status.",
  ArtifactInputUnavailable:
    "An artifact in `spec.artifactInputs` could not be staged before the task started: the source Run or its artifact does not exist, it is in another store than this Runtime's, its bytes did not match the recorded size or digest, or the store stayed unreachable after retrying; `status.message` names the Run and artifact. The task did not run. `retryOn` may list it (a store outage passes; a missing artifact does not).",
  IdleTimeout:
    "A function Run received no invocation for `spec.mode.function.idleTimeout`, or a session no operation for `spec.mode.session.idleTimeout`, and ended (phase Succeeded).",
  RegistrationFailed:
    "A function's source could not be loaded on its pod (syntax error, import error, missing handler); `status.message` has the error.",
  Registered: "Condition reason: the function's handler is loaded on its pod.",
  Serving: "Condition reason: the function Run is Ready and serves invocations through the gateway.",
  SessionLost:
    "A session's state (workspace, processes) was lost on its pod — the Runtime Server restarted — so the session failed; sessions are never re-opened or moved.",
};

/** Reasons `status.waitingReason` may take while the Run is Pending. */
export const WAITING_REASONS = [
  Reason.RuntimeNotFound,
  Reason.NoReadyPods,
  Reason.InsufficientCapacity,
  Reason.Unschedulable,
  Reason.WorkspaceUnavailable,
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

/** Reasons an attempt may fail with that `spec.retryPolicy.retryOn` may list. */
export const RETRYABLE_REASONS = [
  Reason.PodGone,
  Reason.PodTerminating,
  Reason.PodUnhealthy,
  Reason.StartFailed,
  Reason.NonZeroExit,
  Reason.Signaled,
  Reason.Timeout,
  Reason.RegistrationFailed,
  Reason.ArtifactInputUnavailable,
] as const;
export type RetryableReason = (typeof RETRYABLE_REASONS)[number];

/** `retryOn` when a retryPolicy is given without it: failures of the pod, not of the code. */
export const DEFAULT_RETRY_ON: readonly RetryableReason[] = [
  Reason.PodGone,
  Reason.PodTerminating,
  Reason.PodUnhealthy,
  Reason.StartFailed,
];

export const RuntimeConditionType = {
  /** At least one pod is ready and `status.readyReplicas` equals `spec.replicas`. */
  Ready: "Ready",
  /** A rollout or scale change is in progress. */
  Progressing: "Progressing",
} as const;
export type RuntimeConditionType = (typeof RuntimeConditionType)[keyof typeof RuntimeConditionType];

export const RunConditionType = {
  /** True once bound to a pod; False with a waiting reason while Pending. */
  Scheduled: "Scheduled",
  /** True while a function or session serves through `status.endpoint`. */
  Ready: "Ready",
  /** Functions: True once the handler is loaded on the assigned pod. */
  Registered: "Registered",
} as const;
export type RunConditionType = (typeof RunConditionType)[keyof typeof RunConditionType];

export const RunMode = {
  Task: "task",
  Function: "function",
  Session: "session",
} as const;
export type RunMode = (typeof RunMode)[keyof typeof RunMode];
export const RUN_MODES = Object.values(RunMode) as RunMode[];

export const TerminationMode = {
  /** Stop now: cancel the task, unregister the function, close the session. */
  Immediate: "Immediate",
  /** Sessions only: finish what is running, accept nothing new, then end. */
  Drain: "Drain",
} as const;
export type TerminationMode = (typeof TerminationMode)[keyof typeof TerminationMode];

export const ArtifactDriver = {
  S3: "s3",
  Filesystem: "filesystem",
} as const;
export type ArtifactDriver = (typeof ArtifactDriver)[keyof typeof ArtifactDriver];
