/** Builds the queue entry for a Pending Run, with the retry backoff of a recovered attempt. */
import { type Run, RunConditionType, retryDelayMs } from "@kruntimes/api";
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

export function queuedRunFrom(run: Run, seq: number): QueuedRun {
  return {
    ...requestOf(run),
    seq,
    attempt: run.status?.attempt ?? 0,
    notBeforeMs: notBeforeMs(run),
    errors: 0,
    state: "out",
  };
}
