/** The exit code krt returns for a finished Run (see exit-codes.ts), and a one-line summary. */
import { type Run, RunPhase } from "@kruntimes/api";
import { ExitCode } from "../exit-codes.ts";

export function exitCodeForRun(run: Run): number {
  const s = run.status;
  switch (s?.phase) {
    case RunPhase.Ready:
    case RunPhase.Succeeded:
      return ExitCode.Ok;
    case RunPhase.Failed:
      return s.exitCode ? s.exitCode : ExitCode.RunFailed;
    case RunPhase.Timeout:
      return ExitCode.RunTimeout;
    case RunPhase.Cancelled:
      return ExitCode.RunCancelled;
    default:
      return ExitCode.Internal;
  }
}

export function runSummary(run: Run): string {
  const s = run.status ?? {};
  const parts = [`run ${run.metadata.name}: ${s.phase ?? "Pending"}`];
  if (s.exitCode !== undefined) parts.push(`exit code ${s.exitCode}`);
  if (s.signal) parts.push(`signal ${s.signal}`);
  if (s.reason) parts.push(`reason ${s.reason}`);
  if (s.phase === RunPhase.Ready && s.endpoint)
    parts.push(`serving on ${s.endpoint.pod} (attempt ${s.endpoint.attempt})`);
  let line = parts.join(", ");
  if (s.message) line += `: ${s.message}`;
  return line;
}
