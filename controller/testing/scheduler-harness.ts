/** An in-process scheduler wired like production but with an in-memory binder and store. */
import type { Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import pino from "pino";
import { Registry } from "prom-client";
import { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import type { ProfileEntry } from "../scheduler/framework/registry.ts";
import { SchedulerMetrics } from "../scheduler/metrics.ts";
import { builtinRegistry, DEFAULT_PROFILE } from "../scheduler/plugins/index.ts";
import { SchedulingQueue, type WakeSource } from "../scheduler/queue/scheduling-queue.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { Clock } from "../util/clock.ts";
import type { Timers } from "../util/timers.ts";
import { MemoryBinder } from "./memory-binder.ts";

export interface HarnessOptions {
  clock: Clock;
  timers: Timers;
  profile?: readonly ProfileEntry[];
  bindConcurrency?: number;
  /** Feed each successful bind back as an informer event (default true). */
  confirmBinds?: boolean;
}

export interface Harness {
  scheduler: Scheduler;
  binder: MemoryBinder;
  runs: Map<string, Run>;
  wakeups: Map<WakeSource, number>;
  parked: string[];
  ending: string[];
  trouble: string[];
  /** Adds or updates a Run in the store and tells the scheduler (as the informer would). */
  upsert(run: Run): void;
  /** Pops and schedules until the active queue is empty; returns cycles run. */
  drain(): number;
}

export function schedulerHarness(o: HarnessOptions): Harness {
  const runs = new Map<string, Run>();
  const wakeups = new Map<WakeSource, number>();
  const parked: string[] = [];
  const ending: string[] = [];
  const trouble: string[] = [];
  const binder = new MemoryBinder();
  const queue = new SchedulingQueue(o.clock, o.timers, {
    woke: (source, n) => wakeups.set(source, (wakeups.get(source) ?? 0) + n),
  });
  let scheduler: Scheduler | undefined;
  const cache = new SchedulerCache(
    {
      podFreed: (pod, by) => scheduler?.podFreed(pod, by),
      runtimeChanged: (rt) => scheduler?.runtimeChanged(rt),
      runtimePodsChanged: () => {},
      podTrouble: (pod) => trouble.push(pod),
    },
    o.clock,
    o.timers,
    { staleAfterMs: 15_000, assumeTtlMs: 30_000 },
  );
  const metrics = new SchedulerMetrics(
    new Registry(),
    () => queue.sizes,
    () => cache.accounts.assumedCount,
  );
  const fw = builtinRegistry().build(o.profile ?? DEFAULT_PROFILE);
  scheduler = new Scheduler(
    fw,
    cache,
    queue,
    runs,
    binder,
    { parked: (k) => parked.push(k), ending: (k) => ending.push(k) },
    metrics,
    o.clock,
    pino({ level: "silent" }),
    {
      bindConcurrency: o.bindConcurrency ?? 1_000_000,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 10_000,
    },
  );
  const s = scheduler;
  const upsert = (run: Run) => {
    runs.set(keyOf(run), run);
    binder.put(run);
    s.runUpserted(run);
  };
  if (o.confirmBinds !== false) {
    binder.onBound = (run) => {
      runs.set(keyOf(run), run);
      s.runUpserted(run);
    };
  }
  return {
    scheduler: s,
    binder,
    runs,
    wakeups,
    parked,
    ending,
    trouble,
    upsert,
    drain() {
      let n = 0;
      for (let qr = s.queue.pop(); qr; qr = s.queue.pop()) {
        s.scheduleOne(qr);
        n++;
      }
      return n;
    },
  };
}
