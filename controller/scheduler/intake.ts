/** Builds the queue entry for a Pending Run, with the retry backoff of a recovered attempt. */
import { Annotations, type Run, RunConditionType, retryDelayMs } from "@kruntimes/api";
import { parseTime } from "../kube-types.ts";
import type { QueuedRun } from "./queue/queued-run.ts";
import { requestOf } from "./run-request.ts";

/**
 * A Run sent back to Pending by recovery carries `attempt` ≥ 2 and a `Scheduled=False`
 * condition stamped when it was sent back; the next attempt waits out the retry backoff from
 * there. Derived from the object, so a restarted scheduler honours it too.
 */
export function notBeforeMs(run: Run): number {
  const attempt = run.status?.attempt ?? 0;
  if (attempt < 2) return 0;
  const cond = run.status?.conditions?.find((c) => c.type === RunConditionType.Scheduled);
  const since = parseTime(cond?.lastTransitionTime);
  if (!Number.isFinite(since)) return 0;
  return since + retryDelayMs(run.spec, attempt - 1);
}

/**
 * When the Run began waiting for its current attempt, for the queue's aging: when recovery sent
 * it back (attempt ≥ 2), else its creation. `creationTimestamp` is the apiserver's and has
 * 1 s precision; the client's `kruntimes.io/created-micros` refines it only within that second —
 * a client cannot buy aging by claiming an earlier creation. NaN when the object says neither.
 */
export function waitingSinceMs(run: Run): number {
  const created = parseTime(run.metadata.creationTimestamp);
  if ((run.status?.attempt ?? 0) >= 2) {
    const cond = run.status?.conditions?.find((c) => c.type === RunConditionType.Scheduled);
    const since = parseTime(cond?.lastTransitionTime);
    if (Number.isFinite(since)) return Number.isFinite(created) ? Math.max(since, created) : since;
  }
  const micros = Number(run.metadata.annotations?.[Annotations.createdMicros]);
  if (
    Number.isFinite(created) &&
    Number.isFinite(micros) &&
    micros / 1000 >= created &&
    micros / 1000 < created + 1000
  ) {
    return micros / 1000;
  }
  return created;
}

export function queuedRunFrom(run: Run, seq: number): QueuedRun {
  return {
    ...requestOf(run),
    seq,
    sinceMs: waitingSinceMs(run),
    rank: 0,
    attempt: run.status?.attempt ?? 0,
    notBeforeMs: notBeforeMs(run),
    errors: 0,
    state: "out",
  };
}
