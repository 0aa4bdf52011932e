/**
 * Every exit code krt uses, in one table. Codes 64–78 follow BSD sysexits.h; 80–83 say how a
 * waited-for Run ended when it has no exit code of its own; 84–89 are `krt invoke`'s gateway
 * error classes; 90–91 how a waited-for WorkflowRun ended. `krt run --wait` and `krt wait` exit
 * with the Run's own `status.exitCode` when it has one (0–255), so a script's code passes through.
 */
export const ExitCode = {
  Ok: 0,
  /** Bad flags, arguments or flag combinations. */
  Usage: 64,
  /** The API server rejected the object as invalid (HTTP 422/400). */
  Invalid: 65,
  /** The Run, Runtime or other object does not exist. */
  NotFound: 66,
  /** Unexpected error inside krt or an unexpected API response. */
  Internal: 70,
  /** `--timeout` of `krt wait` / `krt run --wait` passed before the Run ended. */
  WaitTimeout: 75,
  /** The cluster is unreachable (connection refused, DNS, TLS). */
  Unavailable: 69,
  /** The API server denied the request (HTTP 401/403). */
  Forbidden: 77,
  /** No usable kubeconfig / context. */
  Config: 78,
  /** The object already exists or was changed concurrently (HTTP 409). */
  Conflict: 79,
  /** The Run ended Failed without an exit code (or with exit code 0). */
  RunFailed: 80,
  /** The Run ended in phase Timeout. */
  RunTimeout: 81,
  /** The Run ended in phase Cancelled. */
  RunCancelled: 82,
  /** `krt bench`: some Runs (or baseline Jobs) did not succeed; the numbers are printed anyway. */
  BenchFailures: 83,
  /** `krt invoke`: the handler raised or exited non-zero (UNKNOWN + HandlerError). */
  HandlerError: 84,
  /** `krt invoke`: the Run is not Ready or not a function (FAILED_PRECONDITION, 409). */
  NotReady: 85,
  /** `krt invoke`: the function or the gateway is busy (RESOURCE_EXHAUSTED, 429); retry later. */
  Busy: 86,
  /** `krt invoke`: the request or the response is over its size limit (413). */
  TooLarge: 87,
  /** `krt invoke`: the gateway could not reach the Run's pod, or its worker crashed (503). */
  FunctionUnavailable: 88,
  /** `krt invoke`: the call's deadline passed (DEADLINE_EXCEEDED, 504). */
  DeadlineExceeded: 89,
  /** `krt workflow trigger --wait`: the WorkflowRun ended Failed. */
  WorkflowFailed: 90,
  /** `krt workflow trigger --wait`: the WorkflowRun ended Cancelled. */
  WorkflowCancelled: 91,
  /** Interrupted (Ctrl-C) after cleaning up. */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One line per code, rendered into docs/cli.md. */
export const EXIT_CODE_DESCRIPTIONS: Record<ExitCode, string> = {
  [ExitCode.Ok]: "Success; with `--wait`/`krt wait`: the Run Succeeded (exit code 0).",
  [ExitCode.Usage]: "Bad flags, arguments or flag combinations (e.g. `--file` with `--entrypoint`).",
  [ExitCode.Invalid]:
    "The API server rejected the object as invalid (HTTP 400/422); `krt workflow trigger`: the rendered WorkflowRun breaks a workflow rule.",
  [ExitCode.NotFound]:
    "The Run, Runtime, Workflow or WorkflowRun does not exist (`krt invoke`: gateway 404).",
  [ExitCode.Unavailable]:
    "The cluster (or, for `krt invoke`, the gateway) is unreachable (connection refused, DNS, TLS).",
  [ExitCode.Internal]: "Unexpected error inside krt.",
  [ExitCode.WaitTimeout]:
    "The wait bound of `krt wait`, `krt run --wait` or `krt session create --wait` passed first.",
  [ExitCode.Forbidden]:
    "The API server or the gateway denied the request (HTTP 401/403); the message names the verb and resource.",
  [ExitCode.Config]: "No usable kubeconfig or context.",
  [ExitCode.Conflict]: "The object already exists or changed concurrently (HTTP 409).",
  [ExitCode.RunFailed]: "The waited-for Run ended Failed without an exit code of its own (or with 0).",
  [ExitCode.RunTimeout]: "The waited-for Run ended in phase Timeout.",
  [ExitCode.RunCancelled]: "The waited-for Run ended in phase Cancelled.",
  [ExitCode.BenchFailures]:
    "`krt bench`: some Runs or baseline Jobs did not succeed (the results are still printed).",
  [ExitCode.HandlerError]:
    "`krt invoke`: the handler raised or exited non-zero; its structured error (type, message, traceback) is on stderr. The Run stays Ready.",
  [ExitCode.NotReady]:
    "`krt invoke`: the Run is not Ready (Pending, finished) or not a function — gateway 409 / FAILED_PRECONDITION.",
  [ExitCode.Busy]:
    "`krt invoke`: the function's queue or the gateway is full — 429 / RESOURCE_EXHAUSTED; retry after the time printed.",
  [ExitCode.TooLarge]:
    "`krt invoke`: the request or response body is over the Run's or the gateway's limit — 413 / RESOURCE_EXHAUSTED.",
  [ExitCode.FunctionUnavailable]:
    "`krt invoke`: the gateway could not reach the Run's pod (or its worker crashed) — 503 / UNAVAILABLE; retry.",
  [ExitCode.DeadlineExceeded]:
    "`krt invoke`: the call's deadline (`--timeout`) passed — 504 / DEADLINE_EXCEEDED.",
  [ExitCode.WorkflowFailed]:
    "`krt workflow trigger --wait`: the WorkflowRun ended Failed (a job failed, or the definition was invalid); the summary names the jobs and steps.",
  [ExitCode.WorkflowCancelled]: "`krt workflow trigger --wait`: the WorkflowRun ended Cancelled.",
  [ExitCode.Interrupted]: "Interrupted with Ctrl-C (`krt bench` deletes what it created first).",
};
