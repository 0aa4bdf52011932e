/**
 * Filter: the pod accepts Runs only while it is Ready, not terminating, not draining for an
 * autoscaler's scale-down (`kruntimes.io/scale-down`), carries a capacity
 * annotation, and its runtimed heartbeat Lease is fresh and held by this very pod (UID).
 */
import { Reason } from "@kruntimes/api";
import type { FilterPlugin } from "../../framework/plugin.ts";
import { Code, rejected, type Status, type Verdict } from "../../framework/status.ts";
import type { PodView, Unavailability } from "../../framework/types.ts";

export const NAME = "pod-available";

const MESSAGES: Record<Unavailability, string> = {
  NotReady: "pod not Ready",
  Terminating: "pod terminating",
  Draining: "pod draining for a scale-down",
  NoHeartbeat: "no runtimed heartbeat",
  HeartbeatStale: "runtimed heartbeat stale",
  HeartbeatNotOwned: "heartbeat Lease held by another pod UID",
  NoCapacity: "pod has no valid kruntimes.io/capacity annotation",
};

const STATUSES = Object.fromEntries(
  Object.entries(MESSAGES).map(([k, m]) => [k, rejected(NAME, Code.Unschedulable, Reason.NoReadyPods, m)]),
) as Record<Unavailability, Status>;

export class PodAvailable implements FilterPlugin {
  readonly name = NAME;

  filter(_state: unknown, _run: unknown, pod: PodView, nowMs: number): Verdict {
    const why = pod.unavailability(nowMs);
    return why === undefined ? undefined : STATUSES[why];
  }
}

export function New(args: unknown): PodAvailable {
  if (args !== undefined && args !== null && Object.keys(args as object).length > 0) {
    throw new Error(`${NAME} takes no args`);
  }
  return new PodAvailable();
}
