/**
 * Is a Run's assignment still good? Pure: the Run, what the cache knows of its pod, and the time.
 * The pod must exist with the assigned UID, not be terminating, and heartbeat (a Lease held by
 * that UID, renewed within `staleAfterMs`); a Run still Scheduled must have been started within
 * `startTimeoutMs` of its bind.
 */
import { Reason, type Run, RunPhase } from "@kruntimes/api";
import type { Heartbeat } from "../scheduler/cache/heartbeat.ts";
import type { PodInfo } from "../scheduler/cache/pod-info.ts";

export interface AssessOptions {
  staleAfterMs: number;
  startTimeoutMs: number;
}

export type StaleReason = typeof Reason.PodGone | typeof Reason.PodTerminating | typeof Reason.PodUnhealthy;

export type Assessment =
  | { readonly kind: "ok"; readonly recheckInMs?: number }
  | { readonly kind: "stale"; readonly reason: StaleReason; readonly message: string };

export function assess(
  run: Run,
  pod: PodInfo | undefined,
  heartbeat: Heartbeat | undefined,
  nowMs: number,
  o: AssessOptions,
): Assessment {
  const a = run.status?.assignment;
  if (!a) return { kind: "ok" };
  if (!pod) return { kind: "stale", reason: Reason.PodGone, message: `pod ${a.pod} no longer exists` };
  if (pod.uid !== a.podUID) {
    return { kind: "stale", reason: Reason.PodGone, message: `pod ${a.pod} was replaced (its UID changed)` };
  }
  if (pod.terminating) {
    return { kind: "stale", reason: Reason.PodTerminating, message: `pod ${a.pod} is terminating` };
  }
  const seconds = Math.round(o.staleAfterMs / 1000);
  if (!heartbeat || heartbeat.holder !== a.podUID) {
    return { kind: "stale", reason: Reason.PodUnhealthy, message: `pod ${a.pod} has no runtimed heartbeat` };
  }
  if (nowMs >= heartbeat.staleBaseMs + o.staleAfterMs) {
    return {
      kind: "stale",
      reason: Reason.PodUnhealthy,
      message: `runtimed on pod ${a.pod} has not renewed its heartbeat for ${seconds}s`,
    };
  }
  if (run.status?.phase === RunPhase.Scheduled) {
    const scheduled = run.status.timing?.scheduledMicros;
    if (scheduled !== undefined) {
      const deadline = scheduled / 1000 + o.startTimeoutMs;
      if (nowMs >= deadline) {
        return {
          kind: "stale",
          reason: Reason.PodUnhealthy,
          message: `pod ${a.pod} did not start attempt ${a.attempt} within ${Math.round(o.startTimeoutMs / 1000)}s of its bind`,
        };
      }
      return { kind: "ok", recheckInMs: deadline - nowMs };
    }
  }
  return { kind: "ok" };
}
