/**
 * The queue of Pending Runs, in three parts like kube-scheduler's: `active` (a FIFO heap by
 * arrival), `backoff` (waiting for a time: retry backoff or error backoff), and `parked`
 * (unschedulable, per Runtime, until a pod of that Runtime can take them). Nothing here polls:
 * parked Runs move only when the cache reports freed capacity or a Runtime change, backoff Runs
 * when one timer fires. A slow safety flush re-activates Runs parked for very long.
 */
import type { Clock } from "../../util/clock.ts";
import { KeyedHeap } from "../../util/heap.ts";
import type { Timers } from "../../util/timers.ts";
import type { Status } from "../framework/status.ts";
import { ParkedPool } from "./parked-pool.ts";
import { PromisedCapacity } from "./promised-capacity.ts";
import type { QueuedRun } from "./queued-run.ts";

export type WakeSource = "capacity_released" | "pod_available" | "runtime_changed" | "backoff_done" | "flush";

export interface QueueListener {
  woke(source: WakeSource, count: number): void;
}

export class SchedulingQueue {
  private readonly all = new Map<string, QueuedRun>();
  private readonly active = new KeyedHeap<QueuedRun>(
    (q) => q.key,
    (a, b) => a.seq < b.seq,
  );
  private readonly backoff = new KeyedHeap<QueuedRun>(
    (q) => q.key,
    (a, b) => a.notBeforeMs < b.notBeforeMs || (a.notBeforeMs === b.notBeforeMs && a.seq < b.seq),
  );
  private readonly parked = new Map<string, ParkedPool>();
  private readonly promised = new PromisedCapacity();
  private parkedCount = 0;
  private waiter: (() => void) | undefined;
  private nextSeq = 0;

  constructor(
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly listener: QueueListener,
  ) {}

  get sizes(): { active: number; backoff: number; parked: number } {
    return { active: this.active.size, backoff: this.backoff.size, parked: this.parkedCount };
  }

  get(key: string): QueuedRun | undefined {
    return this.all.get(key);
  }

  seq(): number {
    return this.nextSeq++;
  }

  /** Queues a new Run (active, or backoff if it must wait). Already-queued Runs are left alone. */
  add(qr: QueuedRun): void {
    if (this.all.has(qr.key)) return;
    this.all.set(qr.key, qr);
    if (qr.notBeforeMs > this.clock.now()) this.toBackoff(qr);
    else this.toActive(qr);
  }

  /** Re-activates a queued Run now (e.g. its attempt changed); no-op when it is not queued. */
  activate(key: string): void {
    const qr = this.all.get(key);
    if (!qr || qr.state === "active") return;
    this.detach(qr);
    this.toActive(qr);
  }

  remove(key: string): QueuedRun | undefined {
    const qr = this.all.get(key);
    if (!qr) return undefined;
    this.detach(qr);
    this.all.delete(key);
    qr.state = "out";
    return qr;
  }

  /** The oldest active Run, taken out of the queue. */
  pop(): QueuedRun | undefined {
    const qr = this.active.pop();
    if (!qr) return undefined;
    this.promised.release(qr);
    this.all.delete(qr.key);
    qr.state = "out";
    return qr;
  }

  /** Resolves when an active Run is available (at once if one is). */
  waitForActive(): Promise<void> {
    if (this.active.size > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Releases a pending `waitForActive` (used on stop). */
  interrupt(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** Puts a popped Run back, parked on its Runtime with the status that rejected it. */
  park(qr: QueuedRun, status: Status): void {
    if (qr.state !== "out") this.detach(qr);
    const now = this.clock.now();
    const same = qr.waiting?.reason === status.reason;
    qr.waiting = {
      reason: status.reason,
      message: status.message,
      sinceMs: same ? (qr.waiting?.sinceMs ?? now) : now,
    };
    this.all.set(qr.key, qr);
    qr.state = "parked";
    let pool = this.parked.get(qr.runtimeKey);
    if (!pool) {
      pool = new ParkedPool();
      this.parked.set(qr.runtimeKey, pool);
    }
    pool.add(qr);
    this.parkedCount++;
  }

  /** Puts a popped Run back to wait until `notBeforeMs`. */
  retryAt(qr: QueuedRun, notBeforeMs: number): void {
    if (qr.state !== "out") this.detach(qr);
    qr.notBeforeMs = notBeforeMs;
    this.all.set(qr.key, qr);
    this.toBackoff(qr);
  }

  /**
   * Wakes parked Runs of the Runtime that fit into the pod's `free` capacity, minus what earlier
   * wakes for the same pod already promised to Runs not cycled yet; returns how many.
   */
  wakeFitting(runtimeKey: string, podKey: string, free: Record<string, number>, source: WakeSource): number {
    const pool = this.parked.get(runtimeKey);
    if (!pool) return 0;
    const runs = pool.takeFitting(this.promised.left(podKey, free));
    if (runs.length === 0) return 0;
    for (const qr of runs) this.promised.promise(podKey, qr);
    return this.wake(runs, runtimeKey, pool, source);
  }

  /** Wakes every parked Run of the Runtime (its spec changed, or it appeared). */
  wakeRuntime(runtimeKey: string, source: WakeSource): number {
    const pool = this.parked.get(runtimeKey);
    if (!pool) return 0;
    return this.wake(pool.takeAll(), runtimeKey, pool, source);
  }

  /** Safety net: re-activates Runs parked since before `beforeMs`. */
  flushParkedBefore(beforeMs: number): number {
    let n = 0;
    for (const [rk, pool] of this.parked) n += this.wake(pool.takeParkedBefore(beforeMs), rk, pool, "flush");
    return n;
  }

  private wake(runs: QueuedRun[], runtimeKey: string, pool: ParkedPool, source: WakeSource): number {
    this.parkedCount -= runs.length;
    if (pool.size === 0) this.parked.delete(runtimeKey);
    for (const qr of runs) this.toActive(qr);
    if (runs.length) this.listener.woke(source, runs.length);
    return runs.length;
  }

  private detach(qr: QueuedRun): void {
    this.promised.release(qr);
    if (qr.state === "active") this.active.remove(qr.key);
    else if (qr.state === "backoff") this.backoff.remove(qr.key);
    else if (qr.state === "parked") {
      const pool = this.parked.get(qr.runtimeKey);
      if (pool?.remove(qr)) {
        this.parkedCount--;
        if (pool.size === 0) this.parked.delete(qr.runtimeKey);
      }
    }
  }

  private toActive(qr: QueuedRun): void {
    qr.state = "active";
    this.active.push(qr);
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w();
    }
  }

  private toBackoff(qr: QueuedRun): void {
    qr.state = "backoff";
    this.backoff.push(qr);
    this.armBackoff();
  }

  private armBackoff(): void {
    const next = this.backoff.peek();
    if (!next) {
      this.timers.clear("backoff");
      return;
    }
    this.timers.set("backoff", next.notBeforeMs - this.clock.now(), () => this.backoffDue());
  }

  private backoffDue(): void {
    const now = this.clock.now();
    let n = 0;
    for (let q = this.backoff.peek(); q && q.notBeforeMs <= now; q = this.backoff.peek()) {
      this.backoff.pop();
      this.toActive(q);
      n++;
    }
    if (n) this.listener.woke("backoff_done", n);
    this.armBackoff();
  }
}
