/** Builds the scheduler (cache, queue, framework, binder, metrics) from the controller options. */
import type { Run } from "@kruntimes/api";
import type { Informer, KubeClient } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ControllerOptions } from "../options.ts";
import { ApiBinder } from "../scheduler/bind/binder.ts";
import type { CacheListener } from "../scheduler/cache/scheduler-cache.ts";
import { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import { pendingThatFits, SchedulerMetrics } from "../scheduler/metrics.ts";
import { builtinRegistry, DEFAULT_PROFILE, type PluginDeps } from "../scheduler/plugins/index.ts";
import { SchedulingQueue } from "../scheduler/queue/scheduling-queue.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { SchedulerLoop } from "../scheduler/scheduler-loop.ts";
import type { Clock } from "../util/clock.ts";
import type { Timers } from "../util/timers.ts";
import type { Controllers } from "./wiring.ts";

export interface SchedulerSetup {
  o: ControllerOptions;
  client: KubeClient;
  clock: Clock;
  timers: Timers;
  log: Logger;
  registry: Registry;
  runs: Informer<Run>;
  /** Filled in by the caller before any event flows. */
  controllers: Controllers;
  /** The informer lookups plugins read (workspaces, …). */
  plugins?: PluginDeps;
  /** Also told about the cache's transitions (after the scheduler and the reconcilers). */
  cacheHooks?: readonly Partial<CacheListener>[];
}

export function buildScheduler(s: SchedulerSetup): { scheduler: Scheduler; loop: SchedulerLoop } {
  let scheduler: Scheduler | undefined;
  let metrics: SchedulerMetrics | undefined;
  const queue = new SchedulingQueue(s.clock, s.timers, {
    woke: (source, n) => metrics?.wakeups.inc({ source }, n),
  });
  const hooks = s.cacheHooks ?? [];
  const cache = new SchedulerCache(
    {
      podFreed: (pod, by) => {
        scheduler?.podFreed(pod, by);
        for (const h of hooks) h.podFreed?.(pod, by);
      },
      runtimeChanged: (rt) => {
        scheduler?.runtimeChanged(rt);
        s.controllers.runtime.enqueue(rt);
        for (const h of hooks) h.runtimeChanged?.(rt);
      },
      runtimePodsChanged: (rt) => {
        s.controllers.runtime.enqueue(rt);
        for (const h of hooks) h.runtimePodsChanged?.(rt);
      },
      podTrouble: (podKey) => {
        for (const key of cache.accounts.runsOn(podKey)) s.controllers.recovery.enqueue(key);
        for (const h of hooks) h.podTrouble?.(podKey);
      },
    },
    s.clock,
    s.timers,
    { staleAfterMs: s.o.staleAfterMs, assumeTtlMs: s.o.assumeTtlMs },
  );
  metrics = new SchedulerMetrics(
    s.registry,
    () => queue.sizes,
    () => cache.accounts.assumedCount,
    () => cache.accounts.heldTotals(),
    {
      bindsInFlight: () => scheduler?.binds.size ?? 0,
      pendingThatFits: () => pendingThatFits(queue.queued(), (rt) => cache.podsOf(rt), s.clock.now()),
    },
  );
  scheduler = new Scheduler(
    builtinRegistry(s.plugins).build(DEFAULT_PROFILE),
    cache,
    queue,
    s.runs,
    new ApiBinder(s.client, s.clock),
    {
      parked: (key) => s.controllers.pending.queue.addAfter(key, s.o.waitingReasonDelayMs),
      ending: (key) => s.controllers.pending.enqueue(key),
    },
    metrics,
    s.clock,
    s.log.child({ component: "scheduler" }),
    {
      bindConcurrency: s.o.bindConcurrency,
      errorBackoffMs: 200,
      maxErrorBackoffMs: 30_000,
    },
  );
  const loop = new SchedulerLoop(scheduler, s.clock, s.timers, {
    parkedFlushMs: s.o.parkedFlushMs,
    assumeTtlMs: s.o.assumeTtlMs,
  });
  return { scheduler, loop };
}
