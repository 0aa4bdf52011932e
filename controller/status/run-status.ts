/**
 * The Run statuses the controller writes, as pure functions of the observed Run: bound to a pod,
 * waiting (Pending with a reason), finished before it ever ran (ModeNotSupported, Cancelled).
 */
import {
  Annotations,
  RunPhase as Phase,
  type Reason,
  type Run,
  RunConditionType,
  type RunPhase,
  type RunStatus,
  type RunTiming,
  type WaitingReason,
} from "@kruntimes/api";
import { kubeTime, setCondition } from "./conditions.ts";

/** `kruntimes.io/created-micros` if the client set a valid one. */
export function createdMicrosOf(run: Run): number | undefined {
  const text = run.metadata.annotations?.[Annotations.createdMicros];
  if (!text || !/^[0-9]{1,17}$/.test(text)) return undefined;
  return Number(text);
}

function baseTiming(run: Run): RunTiming {
  const created = run.status?.timing?.createdMicros ?? createdMicrosOf(run);
  return created === undefined ? {} : { createdMicros: created };
}

/** What survives into a new attempt: artifacts of earlier attempts and the observed generation. */
function carried(run: Run): RunStatus {
  const s = run.status;
  const out: RunStatus = {};
  if (s?.artifactRefs?.length) out.artifactRefs = s.artifactRefs;
  if (run.metadata.generation !== undefined) out.observedGeneration = run.metadata.generation;
  return out;
}

export interface BindTarget {
  pod: string;
  podUID: string;
  node: string;
}

export function boundStatus(
  run: Run,
  to: BindTarget,
  attempt: number,
  micros: number,
  nowMs: number,
): RunStatus {
  const conditions = setCondition(
    run.status?.conditions?.filter((c) => c.type === RunConditionType.Scheduled),
    {
      type: RunConditionType.Scheduled,
      status: "True",
      reason: "Scheduled",
      message: `bound to pod ${to.pod}`,
    },
    kubeTime(nowMs),
    run.metadata.generation,
  );
  return {
    ...carried(run),
    phase: Phase.Scheduled,
    attempt,
    assignment: { pod: to.pod, podUID: to.podUID, attempt, ...(to.node ? { node: to.node } : {}) },
    timing: { ...baseTiming(run), scheduledMicros: micros },
    conditions,
  };
}

export function waitingStatus(run: Run, reason: WaitingReason, message: string, nowMs: number): RunStatus {
  const s = run.status;
  return {
    ...carried(run),
    phase: Phase.Pending,
    ...(s?.attempt !== undefined ? { attempt: s.attempt } : {}),
    ...(s?.reason !== undefined ? { reason: s.reason } : {}),
    waitingReason: reason,
    message: message.slice(0, 4096),
    timing: baseTiming(run),
    conditions: setCondition(
      s?.conditions,
      { type: RunConditionType.Scheduled, status: "False", reason, message },
      kubeTime(nowMs),
      run.metadata.generation,
    ),
  };
}

/** A Run that ends while Pending: it never got an attempt. */
export function endedPendingStatus(
  run: Run,
  phase: RunPhase,
  reason: Reason,
  message: string,
  micros: number,
  nowMs: number,
): RunStatus {
  const s = run.status;
  return {
    ...carried(run),
    phase,
    ...(s?.attempt !== undefined ? { attempt: s.attempt } : {}),
    reason,
    message: message.slice(0, 4096),
    timing: { ...baseTiming(run), finishedMicros: micros },
    conditions: setCondition(
      s?.conditions,
      { type: RunConditionType.Scheduled, status: "False", reason, message },
      kubeTime(nowMs),
      run.metadata.generation,
    ),
  };
}
