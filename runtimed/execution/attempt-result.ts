/**
 * What an attempt's end means for the Run: the mapped outcome, exit code, signal, outputs that
 * fit the status (else OutputsInvalid) and status-sized tails. Pure, so the rules are tested.
 */
import { Reason, RunPhase } from "@kruntimes/api";
import { lostOutcome, outcomeOf } from "../status/outcome.ts";
import type { AttemptResult } from "../status/run-status.ts";
import { checkOutputs, fitTail } from "../status/tails.ts";
import type { AttemptEnd } from "./attempt-stream.ts";

export function attemptResult(
  end: Exclude<AttemptEnd, { kind: "aborted" }>,
  nowMicros: number,
): AttemptResult {
  if (end.kind === "lost")
    return { outcome: lostOutcome(end.message), startedMicros: end.startedMicros, finishedMicros: nowMicros };
  if (end.kind === "refused")
    return {
      outcome: { phase: RunPhase.Failed, reason: end.reason ?? Reason.StartFailed, message: end.message },
      finishedMicros: nowMicros,
    };
  const x = end.exited;
  let outcome = outcomeOf(x);
  let outputs: Record<string, string> | undefined;
  if (Object.keys(x.outputs).length > 0) {
    const checked = checkOutputs(x.outputs);
    if (checked.ok) outputs = checked.outputs;
    else if (outcome.phase === RunPhase.Succeeded)
      outcome = { phase: RunPhase.Failed, reason: Reason.OutputsInvalid, message: checked.message };
    else outcome = { ...outcome, message: `${outcome.message}; outputs dropped: ${checked.message}` };
  }
  return {
    outcome,
    exitCode: x.exitCode,
    signal: x.signal || undefined,
    outputs,
    stdout: fitTail(x.stdoutTail, x.stdoutTruncated),
    stderr: fitTail(x.stderrTail, x.stderrTruncated),
    startedMicros: Number(x.startedAtMicros) || end.startedMicros,
    finishedMicros: Number(x.finishedAtMicros) || nowMicros,
  };
}
