/**
 * Every exit code krt uses, in one table. Codes 64–78 follow BSD sysexits.h; 80–83 say how a
 * waited-for Run ended when it has no exit code of its own. `krt run --wait` and `krt wait` exit
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
  /** Interrupted (Ctrl-C) after cleaning up. */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One line per code, rendered into docs/cli.md. */
export const EXIT_CODE_DESCRIPTIONS: Record<ExitCode, string> = {
  [ExitCode.Ok]: "Success; with `--wait`/`krt wait`: the Run Succeeded (exit code 0).",
  [ExitCode.Usage]: "Bad flags, arguments or flag combinations (e.g. `--file` with `--entrypoint`).",
  [ExitCode.Invalid]: "The API server rejected the object as invalid (HTTP 400/422).",
  [ExitCode.NotFound]: "The Run or Runtime does not exist.",
  [ExitCode.Unavailable]: "The cluster is unreachable (connection refused, DNS, TLS).",
  [ExitCode.Internal]: "Unexpected error inside krt.",
  [ExitCode.WaitTimeout]: "`--timeout` of `krt wait`/`krt run --wait` passed before the Run ended.",
  [ExitCode.Forbidden]:
    "The API server denied the request (HTTP 401/403); the message names the verb and resource.",
  [ExitCode.Config]: "No usable kubeconfig or context.",
  [ExitCode.Conflict]: "The object already exists or changed concurrently (HTTP 409).",
  [ExitCode.RunFailed]: "The waited-for Run ended Failed without an exit code of its own (or with 0).",
  [ExitCode.RunTimeout]: "The waited-for Run ended in phase Timeout.",
  [ExitCode.RunCancelled]: "The waited-for Run ended in phase Cancelled.",
  [ExitCode.BenchFailures]:
    "`krt bench`: some Runs or baseline Jobs did not succeed (the results are still printed).",
  [ExitCode.Interrupted]: "Interrupted with Ctrl-C (`krt bench` deletes what it created first).",
};
