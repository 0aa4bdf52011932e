/**
 * The status writes of a function Run, as pure functions of the Run runtimed observed. Ready is
 * ONE fenced write straight from Scheduled: phase Ready, `status.endpoint`, conditions
 * Registered/Ready True and the registration's timing. Terminal writes reuse the task path's
 * builder and take the Run out of service: no endpoint, Ready and Registered False.
 */
import { Reason, type Run, RunConditionType, RunPhase, type RunStatus } from "@kruntimes/api";
import type { RuntimedOptions } from "../options.ts";
import type { Outcome } from "../status/outcome.ts";
import { baseTiming, carried, setCondition, terminalStatus } from "../status/run-status.ts";

export interface ReadyFacts {
  pod: string;
  podUID: string;
  attempt: number;
  /** `host:port` of this pod's dataplane listener; absent when the dataplane is off. */
  address?: string;
  /** When the Register call was made (µs since the epoch). */
  startedMicros: number;
  /** When the registration became READY (the server's clock, µs). */
  readyMicros: number;
}

/** `host:port`, with IPv6 hosts bracketed. */
export const hostPort = (host: string, port: number) =>
  host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;

/** The {@link ReadyFacts} about this pod: its name, UID, `attempt`, and its dataplane address when the dataplane is on. */
export function podFacts(
  o: Pick<RuntimedOptions, "pod" | "dataplane">,
  attempt: number,
): Pick<ReadyFacts, "pod" | "podUID" | "attempt" | "address"> {
  return {
    pod: o.pod.name,
    podUID: o.pod.uid,
    attempt,
    ...(o.dataplane.port ? { address: hostPort(o.pod.ip, o.dataplane.port) } : {}),
  };
}

export function readyStatus(run: Run, f: ReadyFacts, nowMs: number): RunStatus {
  let conditions = setCondition(
    run.status?.conditions,
    {
      type: RunConditionType.Registered,
      status: "True",
      reason: Reason.Registered,
      message: `the handler is loaded on pod ${f.pod} (attempt ${f.attempt})`,
    },
    nowMs,
  );
  conditions = setCondition(
    conditions,
    {
      type: RunConditionType.Ready,
      status: "True",
      reason: Reason.Serving,
      message: `serving invocations on pod ${f.pod}`,
    },
    nowMs,
  );
  return {
    ...carried(run),
    phase: RunPhase.Ready,
    reason: Reason.Serving,
    message: `registered on pod ${f.pod}; serving invocations`,
    endpoint: {
      pod: f.pod,
      podUID: f.podUID,
      attempt: f.attempt,
      ...(f.address ? { address: f.address } : {}),
      readyMicros: f.readyMicros,
    },
    timing: { ...baseTiming(run), startedMicros: f.startedMicros },
    conditions,
  };
}

/** Ready and Registered False with the Run's reason: it no longer serves. */
function outOfService(s: RunStatus, reason: Reason, message: string, nowMs: number): RunStatus {
  let conditions = s.conditions ?? [];
  for (const type of [RunConditionType.Ready, RunConditionType.Registered]) {
    if (!conditions.some((c) => c.type === type)) continue;
    conditions = setCondition(conditions, { type, status: "False", reason, message }, nowMs);
  }
  const { endpoint: _gone, ...rest } = s;
  return { ...rest, conditions };
}

export function functionTerminalStatus(
  run: Run,
  outcome: Outcome,
  startedMicros: number | undefined,
  finishedMicros: number,
  reportedMicros: number,
  nowMs: number,
): RunStatus {
  const s = terminalStatus(
    run,
    { outcome, finishedMicros, ...(startedMicros ? { startedMicros } : {}) },
    reportedMicros,
    nowMs,
  );
  return outOfService(s, outcome.reason, outcome.message, nowMs);
}

/** After `retryStatus` (a failed registration retried in place): nothing serves meanwhile. */
export function withoutService(s: RunStatus, reason: Reason, message: string, nowMs: number): RunStatus {
  return outOfService(s, reason, message, nowMs);
}
