/**
 * The Run scheduler: one Run per cycle, kube-scheduler style. Informer events feed the cache
 * and the queue (on the standby too, so a new leader starts warm); only the leader runs the
 * loop (`SchedulerLoop`). A cycle is synchronous — filter, score, assume on the cache — and the bind, one fenced
 * status patch, runs asynchronously while the next cycles go on against the assumed state.
 *
 * Wake-ups are targeted: freed capacity wakes only parked Runs that pod can take (the same
 * PreFilter and Filter, for that one pod), and a Run placed on a pod (assumed or bound) wakes
 * parked Runs whose required affinity waits for a Run like it — found through an index of their
 * selectors, never by scanning. A woken Run that does not use the pod it was woken for hands the
 * capacity on.
 */
import type { Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Logger } from "pino";
import { admit } from "../pending/admission.ts";
import type { Clock } from "../util/clock.ts";
import { BindTracker } from "./bind/bind-tracker.ts";
import type { Binder } from "./bind/binder.ts";
import type { Labels } from "./cache/label-selector.ts";
import { sameLabels } from "./cache/label-selector.ts";
import type { PlacedRun, PlacementListener } from "./cache/placement-index.ts";
import type { PodInfo } from "./cache/pod-info.ts";
import type { CacheListener, FreedBy, SchedulerCache } from "./cache/scheduler-cache.ts";
import { findPod, isPlacement } from "./cycle/find-pod.ts";
import { reserveAll, unreserveAll } from "./cycle/reserve.ts";
import { CycleState } from "./framework/cycle-state.ts";
import type { Framework } from "./framework/registry.ts";
import { Code } from "./framework/status.ts";
import { queuedRunFrom } from "./intake.ts";
import type { SchedulerMetrics } from "./metrics.ts";
import type { QueuedRun } from "./queue/queued-run.ts";
import type { PodWake, SchedulingQueue, WakeSource } from "./queue/scheduling-queue.ts";
import { isPending } from "./run-request.ts";
import { type RunSource, RunView } from "./run-view.ts";

export interface SchedulerHooks {
  /** The Run was parked; the pending-status writer may show its waiting reason. */
  parked(runKey: string): void;
  /** The Pending Run must end without running (cancelled, mode not supported). */
  ending(runKey: string): void;
}

export interface SchedulerOptions {
  /** Binds in flight at once. */
  bindConcurrency: number;
  /** Error backoff of a Run: base, doubling per consecutive error, capped. */
  errorBackoffMs: number;
  maxErrorBackoffMs: number;
}

/** Hand-ons of one pod's freed capacity in a row, at most (each is one more cycle). */
const MAX_HANDOFFS = 8;

export class Scheduler implements Pick<CacheListener, "podFreed" | "runtimeChanged">, PlacementListener {
  private readonly state: CycleState;
  /** A separate CycleState for the one-pod wake checks, which run between cycles. */
  private readonly wakeState: CycleState;
  readonly binds: BindTracker;
  /** Informer state overlaid with this process's own latest writes. */
  readonly view: RunView;

  constructor(
    private readonly fw: Framework,
    readonly cache: SchedulerCache,
    readonly queue: SchedulingQueue,
    runs: RunSource,
    binder: Binder,
    private readonly hooks: SchedulerHooks,
    private readonly metrics: SchedulerMetrics,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: SchedulerOptions,
  ) {
    this.view = new RunView(runs, clock);
    this.state = new CycleState(cache.placements);
    this.wakeState = new CycleState(cache.placements);
    queue.usePlacements(cache.placements);
    cache.placements.listen(this);
    this.binds = new BindTracker(binder, cache, this.metrics, log, opts.bindConcurrency, {
      requeue: (key, unlessRv) => this.requeue(key, unlessRv),
      retryLater: (qr) => this.errorBackoff(qr),
    });
  }

  // ---- intake (leader and standby) ----

  runUpserted(run: Run): void {
    this.view.observed(run);
    this.cache.upsertRun(run);
    this.consider(run);
  }

  /**
   * Status-write coordination for the pending-status writer: `false` means the Run is being
   * bound (or is assumed) and must not be written now.
   */
  beginStatusWrite(key: string): boolean {
    if (this.binds.isBinding(key) || this.cache.isAssumed(key)) return false;
    this.view.beginWrite(key);
    return true;
  }

  endStatusWrite(key: string, response: Run | undefined): void {
    if (this.view.endWrite(key, response)) this.requeue(key);
  }

  runDeleted(run: Run): void {
    const key = keyOf(run);
    this.cache.deleteRun(key);
    this.queue.remove(key);
  }

  podFreed(pod: PodInfo, by: FreedBy): void {
    this.wakeFor(pod, by, 0);
  }

  private wakeFor(pod: PodInfo, source: WakeSource, handoffs: number): void {
    const placements = this.cache.placements;
    const domain = pod.domain;
    const wake: PodWake = {
      accept: (qr) => this.podTakes(qr, pod),
      perRun: placements.hasRefusersOn(domain),
      labels: labelsOn(placements.runsOn(domain)),
      handoffs,
    };
    this.queue.wakeFitting(pod.runtimeKey, pod.key, freeOn(pod), source, wake);
  }

  /** The one-pod wake check: the Run's PreFilter and Filter against this pod only. */
  private podTakes(qr: QueuedRun, pod: PodInfo): boolean {
    if (qr.runtimeKey !== pod.runtimeKey) return false;
    this.wakeState.clear();
    const out = findPod(
      this.fw,
      this.wakeState,
      qr,
      this.cache.runtime(qr.runtimeKey),
      [pod],
      this.clock.now(),
    );
    return isPlacement(out);
  }

  /** A Run now holds a pod: parked Runs whose required affinity waits for it may go there. */
  placed(run: PlacedRun): void {
    if (!this.queue.waitsForPlacements(run.namespace)) return;
    const pod = this.cache.pod(run.podKey);
    if (!pod || pod.domain !== run.domain || !pod.isAvailable(this.clock.now())) return;
    this.queue.wakeForPlacement(pod.runtimeKey, pod.key, run.labels, freeOn(pod), {
      accept: (qr) => this.podTakes(qr, pod),
      perRun: this.cache.placements.hasRefusersOn(pod.domain),
    });
  }

  removed(run: PlacedRun): void {
    if (this.queue.waitsForPlacements(run.namespace)) this.queue.placementRemoved(run.namespace, run.labels);
  }

  runtimeChanged(runtimeKey: string): void {
    this.queue.wakeRuntime(runtimeKey, "runtime_changed");
  }

  private consider(run: Run): void {
    const key = keyOf(run);
    if (!isPending(run) || run.metadata.deletionTimestamp) {
      this.queue.remove(key);
      return;
    }
    if (admit(run).kind === "end") {
      this.queue.remove(key);
      this.hooks.ending(key);
      return;
    }
    if (this.binds.isBinding(key) || this.cache.isAssumed(key)) return;
    const existing = this.queue.get(key);
    const attempt = run.status?.attempt ?? 0;
    if (existing) {
      // Labels are mutable and affinity (own and others') reads them: requeue with the new ones.
      if (existing.attempt !== attempt || !sameLabels(existing.labels, run.metadata.labels ?? {})) {
        this.queue.remove(key);
        this.queue.add(queuedRunFrom(run, existing.seq));
      }
      return;
    }
    this.queue.add(queuedRunFrom(run, this.queue.seq()));
  }

  /** Looks at the Run again from the informer's current state. */
  requeue(key: string, unlessResourceVersion?: string): void {
    if (unlessResourceVersion !== undefined) this.view.forget(key);
    const run = this.view.get(key);
    if (!run) return;
    if (unlessResourceVersion !== undefined && run.metadata.resourceVersion === unlessResourceVersion) return;
    this.consider(run);
  }

  private errorBackoff(qr: QueuedRun): void {
    qr.errors++;
    const delay = Math.min(this.opts.maxErrorBackoffMs, this.opts.errorBackoffMs * 2 ** (qr.errors - 1));
    this.queue.retryAt(qr, this.clock.now() + delay);
  }

  /**
   * One cycle. Returns the pod the Run was assumed on, if any. Public for tests and the
   * benchmark. A Run woken for a pod's capacity that did not end up there hands it on.
   */
  scheduleOne(qr: QueuedRun): PodInfo | undefined {
    const wokenFor = qr.wokenFor;
    const handoffs = qr.handoffs ?? 0;
    qr.wokenFor = undefined;
    const placed = this.cycle(qr);
    if (wokenFor !== undefined && placed?.key !== wokenFor && handoffs < MAX_HANDOFFS) {
      const pod = this.cache.pod(wokenFor);
      if (pod?.isAvailable(this.clock.now())) this.wakeFor(pod, "handoff", handoffs + 1);
    }
    return placed;
  }

  private cycle(qr: QueuedRun): PodInfo | undefined {
    if (this.view.isWriting(qr.key)) {
      this.view.defer(qr.key);
      return;
    }
    const run = this.view.get(qr.key);
    if (!run || !isPending(run) || run.metadata.deletionTimestamp || admit(run).kind === "end") return;
    const start = performance.now();
    const now = this.clock.now();
    this.state.clear();
    const outcome = findPod(
      this.fw,
      this.state,
      qr,
      this.cache.runtime(qr.runtimeKey),
      this.cache.podsOf(qr.runtimeKey),
      now,
    );
    if (!isPlacement(outcome)) {
      for (const [s, count] of outcome.rejections) {
        this.metrics.rejections.inc({ plugin: s.plugin || "framework", reason: s.reason }, count);
      }
      if (outcome.status.code === Code.Error) this.errorBackoff(qr);
      else {
        this.queue.park(qr, outcome.status);
        this.hooks.parked(qr.key);
      }
      this.metrics.cycle.observe({ result: "unschedulable" }, (performance.now() - start) / 1000);
      return;
    }
    const pod = outcome.pod;
    const attempt = Math.max(1, run.status?.attempt ?? 0);
    this.metrics.queueWait.observe(
      { priority: priorityBand(qr.priority) },
      Math.max(0, now - qr.sinceMs) / 1000,
    );
    this.cache.assume(qr.key, pod, attempt, qr);
    const refused = reserveAll(this.fw, this.state, qr, pod);
    if (refused) {
      this.cache.forget(qr.key);
      this.queue.park(qr, refused);
      this.metrics.cycle.observe({ result: "unschedulable" }, (performance.now() - start) / 1000);
      return;
    }
    this.binds.start(run, qr, pod, attempt, () => unreserveAll(this.fw, qr, pod));
    this.metrics.cycle.observe({ result: "scheduled" }, (performance.now() - start) / 1000);
    return pod;
  }

  /** Expires assumed binds the informer never confirmed; their Runs are looked at again. */
  expireAssumed(): void {
    for (const key of this.cache.expireAssumed()) {
      this.metrics.assumedExpired.inc();
      this.log.warn({ run: key }, "assumed bind expired without confirmation; rescheduling");
      this.requeue(key);
    }
  }
}

function freeOn(pod: PodInfo): Record<string, number> {
  const free: Record<string, number> = {};
  for (const name of Object.keys(pod.capacity)) free[name] = pod.free(name);
  return free;
}

function* labelsOn(runs: Iterable<PlacedRun>): Iterable<Labels> {
  for (const r of runs) yield r.labels;
}

/** A bounded metric label for a priority: above, at or below the default. */
function priorityBand(priority: number): "high" | "default" | "low" {
  return priority > 0 ? "high" : priority < 0 ? "low" : "default";
}
