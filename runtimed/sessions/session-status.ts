/**
 * The status writes of a session Run, as pure functions of the Run runtimed observed: ONE fenced
 * write straight to Ready (endpoint like a function's, condition Ready True), Finalizing (out of
 * service: endpoint gone, Ready False with why it ends), and the terminal write (the function
 * path's builder, plus the artifact references). Nothing per operation.
 */
import {
  type ArtifactRef,
  Reason,
  type Run,
  RunConditionType,
  RunPhase,
  type RunStatus,
} from "@kruntimes/api";
import { mergeRefs } from "../artifacts/run-artifacts.ts";
import { functionTerminalStatus, type ReadyFacts } from "../functions/function-status.ts";
import type { Outcome } from "../status/outcome.ts";
import { baseTiming, carried, setCondition } from "../status/run-status.ts";

export function sessionReadyStatus(run: Run, f: ReadyFacts, nowMs: number): RunStatus {
  return {
    ...carried(run),
    phase: RunPhase.Ready,
    reason: Reason.Serving,
    message: `session open on pod ${f.pod}; serving operations`,
    endpoint: {
      pod: f.pod,
      podUID: f.podUID,
      attempt: f.attempt,
      ...(f.address ? { address: f.address } : {}),
      readyMicros: f.readyMicros,
    },
    timing: { ...baseTiming(run), startedMicros: f.startedMicros },
    conditions: setCondition(
      run.status?.conditions,
      {
        type: RunConditionType.Ready,
        status: "True",
        reason: Reason.Serving,
        message: `serving session operations on pod ${f.pod}`,
      },
      nowMs,
    ),
  };
}

/** Finalizing: no new operations; accepted ones finish, processes stop, artifacts are exported. */
export function finalizingStatus(run: Run, reason: Reason, message: string, nowMs: number): RunStatus {
  const { endpoint: _gone, ...s } = run.status ?? {};
  return {
    ...s,
    ...carried(run),
    phase: RunPhase.Finalizing,
    reason,
    message,
    conditions: setCondition(
      s.conditions,
      { type: RunConditionType.Ready, status: "False", reason, message },
      nowMs,
    ),
  };
}

export function sessionTerminalStatus(
  run: Run,
  outcome: Outcome,
  refs: readonly ArtifactRef[],
  finishedMicros: number,
  reportedMicros: number,
  nowMs: number,
): RunStatus {
  const s = functionTerminalStatus(
    run,
    outcome,
    run.status?.timing?.startedMicros,
    finishedMicros,
    reportedMicros,
    nowMs,
  );
  if (refs.length > 0) s.artifactRefs = mergeRefs(s.artifactRefs, refs);
  return s;
}
