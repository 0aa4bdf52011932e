/**
 * Binds in flight: bounded concurrency, and what each outcome does to the cache and the queue.
 * A bound Run stays assumed until the informer shows it; a fenced or rejected bind is forgotten
 * (its capacity is released at once); an ambiguous one (network, 5xx) keeps its capacity while
 * a fresh read settles whether the write landed — releasing it early could double-book the pod.
 */
import type { Run } from "@kruntimes/api";
import type { Logger } from "pino";
import type { PodInfo } from "../cache/pod-info.ts";
import type { SchedulerCache } from "../cache/scheduler-cache.ts";
import type { SchedulerMetrics } from "../metrics.ts";
import type { QueuedRun } from "../queue/queued-run.ts";
import { holdsCapacity, isPending } from "../run-request.ts";
import type { Binder, BindOutcome } from "./binder.ts";

export interface BindFollowUp {
  /**
   * Look at the Run again from the informer's state — unless the informer still holds the
   * version the failed bind was decided on (its next event will bring the Run back).
   */
  requeue(key: string, unlessResourceVersion?: string): void;
  /** Retry the Run after its error backoff. */
  retryLater(qr: QueuedRun): void;
}

const SETTLE_DELAYS_MS = [200, 500, 1000, 2000, 5000, 10_000];

export class BindTracker {
  private readonly inflight = new Map<string, string | undefined>();
  private slotWaiters: (() => void)[] = [];

  constructor(
    private readonly binder: Binder,
    private readonly cache: SchedulerCache,
    private readonly metrics: SchedulerMetrics,
    private readonly log: Logger,
    private readonly concurrency: number,
    private readonly follow: BindFollowUp,
  ) {}

  get size(): number {
    return this.inflight.size;
  }
  isBinding(key: string): boolean {
    return this.inflight.has(key);
  }
  hasSlot(): boolean {
    return this.inflight.size < this.concurrency;
  }
  slotFreed(): Promise<void> {
    if (this.hasSlot()) return Promise.resolve();
    return new Promise((r) => this.slotWaiters.push(r));
  }

  start(run: Run, qr: QueuedRun, pod: PodInfo, attempt: number, unreserve: () => void): void {
    this.inflight.set(qr.key, run.metadata.resourceVersion);
    void this.run(run, qr, pod, attempt, unreserve);
  }

  private async run(run: Run, qr: QueuedRun, pod: PodInfo, attempt: number, unreserve: () => void) {
    const t0 = performance.now();
    const out: BindOutcome = await this.binder.bind(
      run,
      { pod: pod.name, podUID: pod.uid, node: pod.node },
      attempt,
    );
    this.metrics.binds.inc({ result: out.kind });
    this.metrics.bindDuration.observe((performance.now() - t0) / 1000);
    if (out.kind === "ambiguous") {
      this.log.warn({ run: qr.key, err: out.error }, "bind outcome unknown; settling with a fresh read");
      await this.settle(run, qr, pod.uid, attempt, unreserve);
    } else if (out.kind === "bound") {
      this.finish(qr.key);
    } else {
      this.cache.forget(qr.key);
      unreserve();
      const usedRv = this.inflight.get(qr.key);
      this.finish(qr.key);
      if (out.kind === "rejected") {
        this.log.error({ run: qr.key, err: out.error }, "bind rejected by the apiserver");
        this.follow.retryLater(qr);
      } else if (out.kind === "fenced") {
        this.follow.requeue(qr.key, usedRv);
      }
    }
  }

  private async settle(run: Run, qr: QueuedRun, podUID: string, attempt: number, unreserve: () => void) {
    for (const delay of SETTLE_DELAYS_MS) {
      await Bun.sleep(delay);
      let fresh: Run | undefined;
      try {
        fresh = await this.binder.read(run.metadata.namespace ?? "", run.metadata.name ?? "");
      } catch (e) {
        this.log.warn({ run: qr.key, err: e }, "reading the Run to settle a bind failed");
        continue;
      }
      const a = fresh?.status?.assignment;
      if (fresh && holdsCapacity(fresh) && a?.podUID === podUID && a.attempt === attempt) {
        this.finish(qr.key);
        return;
      }
      this.cache.forget(qr.key);
      unreserve();
      this.finish(qr.key);
      if (fresh && isPending(fresh)) this.follow.requeue(qr.key);
      return;
    }
    // Still unknown: the assumption stays until it expires (assume TTL), then the Run is retried.
    this.finish(qr.key);
  }

  private finish(key: string): void {
    this.inflight.delete(key);
    const w = this.slotWaiters.shift();
    if (w) w();
  }
}
