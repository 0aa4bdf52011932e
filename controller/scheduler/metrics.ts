/** Scheduler metrics; every label set is bounded (results, plugin names, closed reasons, sources). */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { QueuedRun } from "./queue/queued-run.ts";

export interface QueueSizes {
  active: number;
  backoff: number;
  parked: number;
}

export class SchedulerMetrics {
  readonly cycle: Histogram<"result">;
  readonly binds: Counter<"result">;
  readonly bindDuration: Histogram<string>;
  readonly rejections: Counter<"plugin" | "reason">;
  readonly wakeups: Counter<"source">;
  readonly assumedExpired: Counter<string>;
  readonly queueWait: Histogram<"priority">;

  constructor(
    registry: Registry,
    sizes: () => QueueSizes,
    assumed: () => number,
    /** Capacity held on pods by resource name (Runtime capacity names: few, set by admins). */
    held?: () => Record<string, number>,
    /** Whether the scheduler keeps up: binds in flight, and queued Runs that free capacity could take now. */
    lag?: { bindsInFlight: () => number; pendingThatFits: () => number },
  ) {
    this.cycle = new Histogram({
      name: "kruntimes_scheduler_cycle_duration_seconds",
      help: "Time of one scheduling cycle (filter, score, assume), by result.",
      labelNames: ["result"],
      buckets: [0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1],
      registers: [registry],
    });
    this.binds = new Counter({
      name: "kruntimes_scheduler_binds_total",
      help: "Bind writes by result: bound, fenced, gone, rejected, ambiguous.",
      labelNames: ["result"],
      registers: [registry],
    });
    this.bindDuration = new Histogram({
      name: "kruntimes_scheduler_bind_duration_seconds",
      help: "Latency of the bind status patch.",
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    this.rejections = new Counter({
      name: "kruntimes_scheduler_rejections_total",
      help: "Pods rejected for a Run, by plugin and waiting reason (a Run no pod took counts once per pod).",
      labelNames: ["plugin", "reason"],
      registers: [registry],
    });
    this.wakeups = new Counter({
      name: "kruntimes_scheduler_wakeups_total",
      help: "Parked or backed-off Runs moved back to the active queue, by source.",
      labelNames: ["source"],
      registers: [registry],
    });
    this.queueWait = new Histogram({
      name: "kruntimes_scheduler_queue_wait_seconds",
      help: "Time a Run waited for a pod (since its creation, or since recovery sent it back) until it was placed, by priority band: high (> 0), default (0), low (< 0).",
      labelNames: ["priority"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
      registers: [registry],
    });
    this.assumedExpired = new Counter({
      name: "kruntimes_scheduler_assumed_expired_total",
      help: "Assumed binds that expired without the informer confirming them.",
      registers: [registry],
    });
    new Gauge({
      name: "kruntimes_scheduler_queue_depth",
      help: "Pending Runs in the scheduling queue, by sub-queue.",
      labelNames: ["queue"],
      registers: [registry],
      collect() {
        const s = sizes();
        this.set({ queue: "active" }, s.active);
        this.set({ queue: "backoff" }, s.backoff);
        this.set({ queue: "parked" }, s.parked);
      },
    });
    new Gauge({
      name: "kruntimes_scheduler_assumed_runs",
      help: "Runs bound by this scheduler whose assignment the informer has not shown yet.",
      registers: [registry],
      collect() {
        this.set(assumed());
      },
    });
    if (held)
      new Gauge({
        name: "kruntimes_scheduler_capacity_held",
        help: "Pod capacity held by placed Runs (confirmed and assumed), summed over pods, by resource; 0 when no Run holds a pod.",
        labelNames: ["resource"],
        registers: [registry],
        collect() {
          this.reset();
          for (const [resource, n] of Object.entries(held())) this.set({ resource }, n);
        },
      });
    if (lag) {
      new Gauge({
        name: "kruntimes_scheduler_binds_in_flight",
        help: "Bind patches in flight (bounded by --bind-concurrency).",
        registers: [registry],
        collect() {
          this.set(lag.bindsInFlight());
        },
      });
      new Gauge({
        name: "kruntimes_scheduler_pending_fitting_runs",
        help: "Queued Runs (active or parked, not backing off) that free capacity on an available pod of their Runtime could take right now, placed greedily; Run affinity and workspaces are not checked. Staying above 0 means the scheduler lags behind freed capacity.",
        registers: [registry],
        collect() {
          this.set(lag.pendingThatFits());
        },
      });
    }
  }
}

/** What `pendingThatFits` reads of a pod (a PodInfo). */
export interface FitPod {
  readonly capacity: Readonly<Record<string, number>>;
  readonly sealed: boolean;
  readonly occupied: boolean;
  free(name: string): number;
  isAvailable(nowMs: number): boolean;
}

/**
 * Queued Runs that free capacity could take now: each Run (active or parked; backing-off ones
 * wait for their time) is placed on the first available pod of its Runtime with room, and that
 * room is used up, as the scheduler would. A Runtime whose pods have no room left is skipped at
 * once, so a large backlog on full pods costs one pass over the queue.
 */
export function pendingThatFits(
  queued: Iterable<Pick<QueuedRun, "runtimeKey" | "names" | "amounts" | "exclusive" | "state">>,
  podsOf: (runtimeKey: string) => readonly FitPod[],
  nowMs: number,
): number {
  interface Room {
    free: Record<string, number>;
    whole: boolean;
  }
  const rooms = new Map<string, Room[]>();
  const roomsOf = (runtimeKey: string): Room[] => {
    let r = rooms.get(runtimeKey);
    if (r) return r;
    r = [];
    for (const p of podsOf(runtimeKey)) {
      if (p.sealed || !p.isAvailable(nowMs)) continue;
      const free: Record<string, number> = {};
      let any = false;
      for (const name of Object.keys(p.capacity)) {
        free[name] = p.free(name);
        if ((free[name] as number) > 0) any = true;
      }
      if (any) r.push({ free, whole: !p.occupied });
    }
    rooms.set(runtimeKey, r);
    return r;
  };
  let fits = 0;
  for (const qr of queued) {
    if (qr.state === "backoff" || qr.state === "out") continue;
    const r = roomsOf(qr.runtimeKey);
    if (r.length === 0) continue;
    const i = r.findIndex((room) =>
      qr.exclusive ? room.whole : qr.names.every((n, k) => (room.free[n] ?? 0) >= (qr.amounts[k] as number)),
    );
    if (i < 0) continue;
    fits++;
    const room = r[i] as Room;
    room.whole = false;
    if (qr.exclusive) room.free = {};
    else
      for (let k = 0; k < qr.names.length; k++) {
        const n = qr.names[k] as string;
        room.free[n] = (room.free[n] ?? 0) - (qr.amounts[k] as number);
      }
    if (!Object.values(room.free).some((v) => v > 0)) r.splice(i, 1);
  }
  return fits;
}
