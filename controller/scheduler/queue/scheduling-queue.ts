/**
 * The queue of Pending Runs, in three parts like kube-scheduler's: `active` (a heap by priority
 * with aging, FIFO within equal effective priority), `backoff` (waiting for a time: retry
 * backoff or error backoff), and `parked` (unschedulable, per Runtime, until a pod of that
 * Runtime can take them). Nothing here polls: parked Runs move only when the cache reports freed
 * capacity, a Runtime change or a Run placed that parked Runs' affinity waits for, backoff Runs
 * when one timer fires. A slow safety flush re-activates Runs parked for very long.
 *
 * Priority: a Run's effective priority is `spec.priority` + 1 per `agingIntervalMs` waited
 * (since its creation, or since recovery sent it back). Higher pops first; equal effective
 * priority pops in arrival order; nothing is preempted. Aging keeps a low priority from
 * starving: a Run of priority p goes before any Run of priority q > p that began waiting more
 * than (q − p) intervals after it.
 */
import type { Clock } from "../../util/clock.ts";
import { KeyedHeap } from "../../util/heap.ts";
import type { Timers } from "../../util/timers.ts";
import type { CompiledTerm } from "../cache/affinity-terms.ts";
import { type Labels, labelPosting, matches } from "../cache/label-selector.ts";
import { PlacementIndex, type PlacementView } from "../cache/placement-index.ts";
import type { Status } from "../framework/status.ts";
import { type GroupIndex, type ParkedGroup, ParkedPool, type WakeCheck } from "./parked-pool.ts";
import { PromisedCapacity } from "./promised-capacity.ts";
import { before, type QueuedRun } from "./queued-run.ts";

export type WakeSource =
  | "capacity_released"
  | "pod_available"
  | "runtime_changed"
  | "backoff_done"
  | "flush"
  | "affinity_target"
  | "handoff";

/** Effective priority grows by 1 per this long waited. */
export const PRIORITY_AGING_INTERVAL_MS = 1000;

/** A pod that frees capacity, as the wake sees it. */
export interface PodWake extends WakeCheck {
  /** Labels of the Runs on the pod: parked Runs whose required affinity waits for them are candidates. */
  readonly labels: Iterable<Labels>;
  /** Hand-ons of the pod's capacity that led to this wake. */
  readonly handoffs?: number;
}

export interface QueueOptions {
  agingIntervalMs?: number;
}

/** Bucket of groups whose term has no positive requirement: looked at for every placed Run. */
const ANY = "*";
const NO_PLACEMENTS: PlacementView = new PlacementIndex();

export interface QueueListener {
  woke(source: WakeSource, count: number): void;
}

export class SchedulingQueue implements GroupIndex {
  private readonly all = new Map<string, QueuedRun>();
  private readonly active = new KeyedHeap<QueuedRun>((q) => q.key, before);
  private readonly backoff = new KeyedHeap<QueuedRun>(
    (q) => q.key,
    (a, b) => a.notBeforeMs < b.notBeforeMs || (a.notBeforeMs === b.notBeforeMs && a.seq < b.seq),
  );
  private readonly parked = new Map<string, ParkedPool>();
  /** Queued Runs per Runtime key, kept with `all`. */
  private readonly perRuntime = new Map<string, number>();
  private readonly promised = new PromisedCapacity();
  private parkedCount = 0;
  private waiter: (() => void) | undefined;
  private nextSeq = 0;
  private readonly agingMs: number;
  private placements: PlacementView = NO_PLACEMENTS;
  /** Parked groups waiting for particular Runs: namespace → label posting → groups. */
  private readonly waiters = new Map<string, Map<string, Set<ParkedGroup>>>();

  constructor(
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly listener: QueueListener,
    opts: QueueOptions = {},
  ) {
    this.agingMs = opts.agingIntervalMs ?? PRIORITY_AGING_INTERVAL_MS;
  }

  /** Where Runs are placed (the scheduler cache's index): parked affinity groups are checked against it. */
  usePlacements(view: PlacementView): void {
    this.placements = view;
  }

  get sizes(): { active: number; backoff: number; parked: number } {
    return { active: this.active.size, backoff: this.backoff.size, parked: this.parkedCount };
  }

  get(key: string): QueuedRun | undefined {
    return this.all.get(key);
  }

  /** Every queued Run (active, backoff, parked): the autoscaler's Pending demand. */
  queued(): IterableIterator<QueuedRun> {
    return this.all.values();
  }

  /** How many Runs of the Runtime are queued (active, backoff, parked): its `status.pendingRuns`. */
  queuedOf(runtimeKey: string): number {
    return this.perRuntime.get(runtimeKey) ?? 0;
  }

  private keep(qr: QueuedRun): void {
    if (!this.all.has(qr.key)) this.perRuntime.set(qr.runtimeKey, this.queuedOf(qr.runtimeKey) + 1);
    this.all.set(qr.key, qr);
  }

  private drop(qr: QueuedRun): void {
    if (!this.all.delete(qr.key)) return;
    const n = this.queuedOf(qr.runtimeKey) - 1;
    if (n > 0) this.perRuntime.set(qr.runtimeKey, n);
    else this.perRuntime.delete(qr.runtimeKey);
  }

  seq(): number {
    return this.nextSeq++;
  }

  /** Queues a new Run (active, or backoff if it must wait). Already-queued Runs are left alone. */
  add(qr: QueuedRun): void {
    if (this.all.has(qr.key)) return;
    const now = this.clock.now();
    // A creation time ahead of this clock (skew) counts as now.
    qr.sinceMs = Number.isFinite(qr.sinceMs) ? Math.min(qr.sinceMs, now) : now;
    qr.rank = qr.priority * this.agingMs - qr.sinceMs;
    this.keep(qr);
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
    this.drop(qr);
    qr.state = "out";
    return qr;
  }

  /** The active Run of highest effective priority (the oldest among equals), taken out of the queue. */
  pop(): QueuedRun | undefined {
    const qr = this.active.pop();
    if (!qr) return undefined;
    this.promised.release(qr);
    this.drop(qr);
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
    this.keep(qr);
    qr.state = "parked";
    let pool = this.parked.get(qr.runtimeKey);
    if (!pool) {
      pool = new ParkedPool(this);
      this.parked.set(qr.runtimeKey, pool);
    }
    pool.add(qr);
    this.parkedCount++;
  }

  /** Puts a popped Run back to wait until `notBeforeMs`. */
  retryAt(qr: QueuedRun, notBeforeMs: number): void {
    if (qr.state !== "out") this.detach(qr);
    qr.notBeforeMs = notBeforeMs;
    this.keep(qr);
    this.toBackoff(qr);
  }

  /**
   * Wakes parked Runs of the Runtime that fit into the pod's `free` capacity, minus what earlier
   * wakes for the same pod already promised to Runs not cycled yet, best first; returns how many.
   * With `pod`, only Runs the pod can take are woken (its filters for each group), and parked
   * Runs whose required affinity waits for a Run on the pod are candidates too.
   */
  wakeFitting(
    runtimeKey: string,
    podKey: string,
    free: Record<string, number>,
    source: WakeSource,
    pod?: PodWake,
  ): number {
    const pool = this.parked.get(runtimeKey);
    if (!pool) return 0;
    const bound = pod ? this.boundFor(namespaceOf(runtimeKey), runtimeKey, pod.labels) : [];
    const runs = pool.takeFitting(this.promised.left(podKey, free), pod, bound);
    if (runs.length === 0) return 0;
    this.promiseAll(podKey, runs, pod?.handoffs ?? 0);
    return this.wake(runs, runtimeKey, pool, source);
  }

  /**
   * A Run with `labels` was placed on the pod (assumed or bound): wakes parked Runs whose
   * required affinity waits for such a Run, as many as the pod has room for and can take.
   */
  wakeForPlacement(
    runtimeKey: string,
    podKey: string,
    labels: Labels,
    free: Record<string, number>,
    check: WakeCheck,
  ): number {
    const pool = this.parked.get(runtimeKey);
    if (!pool) return 0;
    const bound = this.boundFor(namespaceOf(runtimeKey), runtimeKey, [labels]);
    if (bound.length === 0) return 0;
    const runs = pool.takeFromBound(bound, this.promised.left(podKey, free), check);
    if (runs.length === 0) return 0;
    this.promiseAll(podKey, runs, 0);
    return this.wake(runs, runtimeKey, pool, "affinity_target");
  }

  /**
   * A placed Run with `labels` left its pod: parked groups that waited for such Runs may now
   * start their own cohort (none is left in the namespace), so any pod will do for them again.
   */
  placementRemoved(namespace: string, labels: Labels): void {
    for (const g of this.boundFor(namespace, undefined, [labels])) this.parked.get(g.runtimeKey)?.reopen(g);
  }

  /** Whether parked Runs of the namespace wait for particular Runs (placement events matter). */
  waitsForPlacements(namespace: string): boolean {
    return this.waiters.has(namespace);
  }

  private promiseAll(podKey: string, runs: QueuedRun[], handoffs: number): void {
    for (const qr of runs) {
      this.promised.promise(podKey, qr);
      qr.wokenFor = podKey;
      qr.handoffs = handoffs;
    }
  }

  // ---- the index of parked groups waiting for particular Runs (GroupIndex) ----

  bind(g: ParkedGroup): void {
    let byPosting = this.waiters.get(g.namespace);
    if (!byPosting) {
      byPosting = new Map();
      this.waiters.set(g.namespace, byPosting);
    }
    for (const p of postingsOf(g)) {
      let set = byPosting.get(p);
      if (!set) {
        set = new Set();
        byPosting.set(p, set);
      }
      set.add(g);
    }
  }

  unbind(g: ParkedGroup): void {
    const byPosting = this.waiters.get(g.namespace);
    if (!byPosting) return;
    for (const p of postingsOf(g)) {
      const set = byPosting.get(p);
      set?.delete(g);
      if (set?.size === 0) byPosting.delete(p);
    }
    if (byPosting.size === 0) this.waiters.delete(g.namespace);
  }

  seedable(g: ParkedGroup): boolean {
    const terms = g.affinity?.requiredAffinity ?? [];
    for (let i = 0; i < terms.length; i++) {
      if ((g.selfMask & (1 << i)) === 0) return false;
      if (this.placements.anyMatch(g.namespace, (terms[i] as CompiledTerm).selector, "")) return false;
    }
    return true;
  }

  /** Bound groups (of `runtimeKey`, or any) with a required term that one of `labelSets` matches. */
  private boundFor(
    namespace: string,
    runtimeKey: string | undefined,
    labelSets: Iterable<Labels>,
  ): ParkedGroup[] {
    const byPosting = this.waiters.get(namespace);
    if (!byPosting) return [];
    const found = new Set<ParkedGroup>();
    const out: ParkedGroup[] = [];
    const consider = (groups: Set<ParkedGroup> | undefined, labels: Labels) => {
      if (!groups) return;
      for (const g of groups) {
        if (found.has(g) || (runtimeKey !== undefined && g.runtimeKey !== runtimeKey)) continue;
        if (g.affinity?.requiredAffinity.some((t) => matches(t.selector, labels))) {
          found.add(g);
          out.push(g);
        }
      }
    };
    for (const labels of labelSets) {
      for (const k in labels) {
        consider(byPosting.get(labelPosting(k, labels[k] as string)), labels);
        consider(byPosting.get(k), labels);
      }
      consider(byPosting.get(ANY), labels);
    }
    return out;
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
    qr.wokenFor = undefined;
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

function namespaceOf(runtimeKey: string): string {
  return runtimeKey.slice(0, runtimeKey.indexOf("/"));
}

/** Where a bound group is indexed: per required term, the postings a Run it waits for carries one of. */
function postingsOf(g: ParkedGroup): string[] {
  const out: string[] = [];
  for (const t of g.affinity?.requiredAffinity ?? []) out.push(...(t.selector.postings[0] ?? [ANY]));
  return out;
}
