/** The statuses recovery writes: back to Pending for another attempt, or Failed. */
import { type Reason, type Run, RunConditionType, RunPhase, type RunStatus } from "@kruntimes/api";
import { kubeTime, setCondition } from "../status/conditions.ts";
import { createdMicrosOf } from "../status/run-status.ts";

/** Pending with `attempt + 1`, no assignment; the Scheduled=False condition stamps the time. */
export function requeuedStatus(run: Run, reason: Reason, message: string, nowMs: number): RunStatus {
  const s = run.status ?? {};
  const created = s.timing?.createdMicros ?? createdMicrosOf(run);
  return {
    ...(s.artifactRefs?.length ? { artifactRefs: s.artifactRefs } : {}),
    ...(run.metadata.generation !== undefined ? { observedGeneration: run.metadata.generation } : {}),
    phase: RunPhase.Pending,
    attempt: (s.attempt ?? 1) + 1,
    reason,
    message: `attempt ${s.attempt ?? 1} lost: ${message}; retrying`,
    timing: created === undefined ? {} : { createdMicros: created },
    conditions: setCondition(
      s.conditions?.filter((c) => c.type === RunConditionType.Scheduled),
      { type: RunConditionType.Scheduled, status: "False", reason, message },
      kubeTime(nowMs),
      run.metadata.generation,
    ),
  };
}

/**
 * A terminal phase that keeps the assignment and what runtimed reported. A function Run no longer
 * serves: its endpoint goes and its Ready/Registered conditions turn False with the reason.
 */
export function endedStatus(
  run: Run,
  phase: typeof RunPhase.Failed | typeof RunPhase.Cancelled,
  reason: Reason,
  message: string,
  micros: number,
): RunStatus {
  const { endpoint: _gone, ...s } = run.status ?? {};
  const at = kubeTime(Math.floor(micros / 1000));
  let conditions = s.conditions;
  for (const type of [RunConditionType.Ready, RunConditionType.Registered]) {
    if (!conditions?.some((c) => c.type === type && c.status === "True")) continue;
    conditions = setCondition(
      conditions,
      { type, status: "False", reason, message },
      at,
      run.metadata.generation,
    );
  }
  return {
    ...s,
    ...(conditions ? { conditions } : {}),
    phase,
    reason,
    message: message.slice(0, 4096),
    timing: { ...s.timing, finishedMicros: s.timing?.finishedMicros ?? micros },
  };
}
