/**
 * Wake-ups of Runs parked on a PersistentWorkspace, by index (WorkspaceIndex), never by a scan:
 * - the workspace changed (bound, released, lost, deleted, re-created): its parked Runs are looked
 *   at again — the plugin tells them what is new;
 * - capacity freed on a pod: the parked Runs of the workspaces bound to that pod, as many as the
 *   pod has free `runs`. The queue's own release wake-up picks Runs of the Runtime by request
 *   shape and may pick ones pinned elsewhere; this one reaches the Runs that can only go there.
 * Only parked Runs move: a Run in retry backoff keeps waiting out its backoff.
 */
import { Counter, type Registry } from "prom-client";
import type { WorkspaceIndex } from "../../../workspace/workspace-index.ts";

export interface ParkedQueue {
  get(key: string): { state: string } | undefined;
  activate(key: string): void;
}

export class WorkspaceWakeups {
  private readonly woken: Counter<string> | undefined;

  constructor(
    private readonly index: WorkspaceIndex,
    private readonly queue: ParkedQueue,
    registry?: Registry,
  ) {
    this.woken = registry
      ? new Counter({
          name: "kruntimes_scheduler_workspace_wakeups_total",
          help: "Parked Runs woken because their PersistentWorkspace changed or its pod freed capacity.",
          labelNames: ["source"],
          registers: [registry],
        })
      : undefined;
  }

  /** Wakes the parked Runs naming the workspace `namespace/name`; returns how many. */
  workspaceChanged(wsKey: string): number {
    return this.wake(this.index.pendingRunsOf(wsKey), Number.POSITIVE_INFINITY, "workspace_changed");
  }

  /** Capacity freed on the pod `namespace/name`: wakes up to `freeRuns` Runs pinned to it. */
  podFreed(podKey: string, freeRuns: number): number {
    let left = Math.max(1, freeRuns);
    let n = 0;
    for (const ws of this.index.boundTo(podKey)) {
      if (left <= 0) break;
      const woke = this.wake(this.index.pendingRunsOf(ws), left, "capacity_released");
      left -= woke;
      n += woke;
    }
    return n;
  }

  private wake(keys: ReadonlySet<string>, max: number, source: string): number {
    let n = 0;
    for (const key of keys) {
      if (n >= max) break;
      if (this.queue.get(key)?.state !== "parked") continue;
      this.queue.activate(key);
      n++;
    }
    if (n) this.woken?.inc({ source }, n);
    return n;
  }
}
