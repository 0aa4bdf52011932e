/**
 * The Run scheduler: one Run per cycle, kube-scheduler style. Informer events feed the cache
 * and the queue (on the standby too, so a new leader starts warm); only the leader runs the
 * loop (`SchedulerLoop`). A cycle is synchronous — filter, score, assume on the cache — and the bind, one fenced
 * status patch, runs asynchronously while the next cycles go on against the assumed state.
 */
import type { Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Logger } from "pino";
import { admit } from "../pending/admission.ts";
import type { Clock } from "../util/clock.ts";
import { BindTracker } from "./bind/bind-tracker.ts";
import type { Binder } from "./bind/binder.ts";
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
import type { SchedulingQueue } from "./queue/scheduling-queue.ts";
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

export class Scheduler implements Pick<CacheListener, "podFreed" | "runtimeChanged"> {
  private readonly state = new CycleState();
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
    const free: Record<string, number> = {};
    for (const name of Object.keys(pod.capacity)) free[name] = pod.free(name);
    this.queue.wakeFitting(pod.runtimeKey, pod.key, free, by);
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
      if (existing.attempt !== attempt) {
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

  /** One cycle. Returns the pod the Run was assumed on, if any. Public for tests and the benchmark. */
  scheduleOne(qr: QueuedRun): PodInfo | undefined {
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
    this.cache.assume(qr.key, pod, attempt, qr.names, qr.amounts, qr.exclusive);
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
