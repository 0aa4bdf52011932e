/**
 * Parked (unschedulable) Runs of one Runtime, in groups of Runs that are interchangeable for any
 * pod: the same request shape and the same placement constraints (required Run affinity terms,
 * which of them the Run matches itself, the workspace). Within a group Runs are ordered by the
 * queue's rank (priority with aging, then arrival), so a freed slot goes to the Run that would
 * pop first.
 *
 * A group is *open* when its Runs could use any pod of the Runtime as far as required Run
 * affinity goes (they have none, or every term is still unmet in the namespace and they may seed
 * it); open groups are looked at, best first, whenever a pod frees capacity. Every other group
 * waits for particular Runs: the queue finds it through its affinity terms when such a Run is
 * placed or still sits on the freed pod — never by scanning.
 */
import { KeyedHeap } from "../../util/heap.ts";
import { type CompiledAffinity, compiledAffinity, selfMatchMask } from "../cache/affinity-terms.ts";
import { before, type QueuedRun } from "./queued-run.ts";

export interface ParkedGroup {
  readonly key: string;
  readonly namespace: string;
  readonly runtimeKey: string;
  readonly names: readonly string[];
  readonly amounts: readonly number[];
  readonly runs: KeyedHeap<QueuedRun>;
  /** Its Runs may use only some pods (required affinity or anti-affinity, a workspace). */
  readonly constrained: boolean;
  /** Present when the Runs have required runAffinity terms. */
  readonly affinity: CompiledAffinity | undefined;
  /** Which required runAffinity terms the Runs match themselves (they may seed those). */
  readonly selfMask: number;
  open: boolean;
}

/** Whether the pod a wake is for can take a Run (its PreFilter and Filter for that pod). */
export interface WakeCheck {
  accept(qr: QueuedRun): boolean;
  /** The answer depends on each Run's own labels (anti-affinity of Runs on the pod): ask per Run. */
  readonly perRun: boolean;
}

/** Where groups waiting for particular Runs are indexed (the queue's affinity waiters). */
export interface GroupIndex {
  bind(g: ParkedGroup): void;
  unbind(g: ParkedGroup): void;
  /** Whether every required term of the group is unmet in the namespace and self-matched. */
  seedable(g: ParkedGroup): boolean;
}

export function topOf(g: ParkedGroup): QueuedRun {
  return g.runs.peek() as QueuedRun;
}

/** Groups best first (by their best Run). */
export function groupBefore(a: ParkedGroup, b: ParkedGroup): boolean {
  return before(topOf(a), topOf(b));
}

export class ParkedPool {
  private readonly groups = new Map<string, ParkedGroup>();
  private open = new KeyedHeap<ParkedGroup>((g) => g.key, groupBefore);
  private count = 0;

  constructor(private readonly index: GroupIndex) {}

  get size(): number {
    return this.count;
  }

  add(qr: QueuedRun): void {
    const g = this.groupFor(qr);
    if (!g.runs.has(qr.key)) this.count++;
    g.runs.push(qr);
    if (g.open) this.open.push(g);
  }

  remove(qr: QueuedRun): boolean {
    const g = qr.group === undefined ? undefined : this.groups.get(qr.group);
    if (!g?.runs.remove(qr.key)) return false;
    this.count--;
    this.settle(g);
    return true;
  }

  /**
   * Takes Runs that fit into `free` (name → amount) and pass `check`, best first, from the open
   * groups and the bound groups the caller found for this pod; subtracts what they take.
   */
  takeFitting(
    free: Record<string, number>,
    check?: WakeCheck,
    bound: readonly ParkedGroup[] = [],
  ): QueuedRun[] {
    const out: QueuedRun[] = [];
    const others = bound.length > 1 ? [...bound].sort((a, b) => (groupBefore(a, b) ? -1 : 1)) : bound;
    const popped: ParkedGroup[] = [];
    let i = 0;
    while (hasRoom(free)) {
      const o = this.open.peek();
      const b = others[i];
      let g: ParkedGroup;
      if (o && (!b || b.runs.size === 0 || groupBefore(o, b))) {
        this.open.pop();
        popped.push(o);
        g = o;
      } else if (b) {
        i++;
        g = b;
      } else break;
      if (g.runs.size === 0) continue;
      if (g.open && g.affinity && !this.index.seedable(g)) {
        // A Run it waits for got placed since it parked: from now on it is found through them.
        g.open = false;
        this.index.bind(g);
      }
      this.takeFrom(g, free, check, out);
    }
    for (const g of popped) if (g.open && g.runs.size > 0) this.open.push(g);
    for (const g of popped) this.settle(g);
    for (const g of others) this.settle(g);
    return out;
  }

  /**
   * Takes from the given bound groups only (a Run they wait for was just placed on the pod),
   * best first, what fits into `free` and passes `check`.
   */
  takeFromBound(bound: readonly ParkedGroup[], free: Record<string, number>, check: WakeCheck): QueuedRun[] {
    const out: QueuedRun[] = [];
    const sorted = bound.length > 1 ? [...bound].sort((a, b) => (groupBefore(a, b) ? -1 : 1)) : bound;
    for (const g of sorted) {
      if (!hasRoom(free)) break;
      if (g.runs.size > 0) this.takeFrom(g, free, check, out);
    }
    for (const g of sorted) this.settle(g);
    return out;
  }

  /** Takes from one group what fits into `free` and passes `check`, best first. */
  private takeFrom(
    g: ParkedGroup,
    free: Record<string, number>,
    check: WakeCheck | undefined,
    out: QueuedRun[],
  ): void {
    let k = Number.POSITIVE_INFINITY;
    for (let i = 0; i < g.names.length; i++) {
      const amount = g.amounts[i] as number;
      if (amount > 0) k = Math.min(k, Math.floor((free[g.names[i] as string] ?? 0) / amount));
    }
    if (k <= 0) return;
    const ask = check !== undefined && (g.constrained || check.perRun);
    // Runs of one group are alike for a pod, unless the pod looks at their own labels.
    if (ask && !check.perRun && !check.accept(topOf(g))) return;
    const skipped: QueuedRun[] = [];
    let taken = 0;
    while (taken < k && g.runs.size > 0) {
      const qr = g.runs.pop() as QueuedRun;
      if (ask && check.perRun && !check.accept(qr)) {
        skipped.push(qr);
        continue;
      }
      out.push(qr);
      taken++;
    }
    for (const qr of skipped) g.runs.push(qr);
    this.count -= taken;
    for (let i = 0; i < g.names.length; i++) {
      const name = g.names[i] as string;
      free[name] = (free[name] ?? 0) - taken * (g.amounts[i] as number);
    }
  }

  /** Moves bound groups whose awaited Runs are all gone back to open (they may seed now). */
  reopen(g: ParkedGroup): void {
    if (g.open || g.runs.size === 0 || !this.index.seedable(g)) return;
    this.index.unbind(g);
    g.open = true;
    this.open.push(g);
  }

  /** Call after taking from `g` outside takeFitting: drops it when empty. */
  settle(g: ParkedGroup): void {
    if (g.runs.size > 0) {
      if (g.open && this.open.has(g.key)) this.open.push(g);
      return;
    }
    if (this.groups.get(g.key) !== g) return;
    this.groups.delete(g.key);
    if (g.open) this.open.remove(g.key);
    else this.index.unbind(g);
  }

  takeAll(): QueuedRun[] {
    const out: QueuedRun[] = [];
    for (const g of this.groups.values()) {
      for (let qr = g.runs.pop(); qr; qr = g.runs.pop()) out.push(qr);
      if (!g.open) this.index.unbind(g);
    }
    this.groups.clear();
    this.open = new KeyedHeap<ParkedGroup>((g) => g.key, groupBefore);
    this.count = 0;
    return out;
  }

  /** Runs parked at or before `beforeMs` (for the periodic safety flush). */
  takeParkedBefore(beforeMs: number): QueuedRun[] {
    const out: QueuedRun[] = [];
    for (const g of this.groups.values()) {
      for (const qr of g.runs.values()) if ((qr.waiting?.sinceMs ?? 0) <= beforeMs) out.push(qr);
    }
    for (const qr of out) this.remove(qr);
    return out;
  }

  private groupFor(qr: QueuedRun): ParkedGroup {
    const affinity = compiledAffinity(qr.affinity);
    const required = affinity?.requiredKey ?? "";
    const withAffinity = affinity && affinity.requiredAffinity.length > 0 ? affinity : undefined;
    const selfMask = withAffinity ? selfMatchMask(withAffinity, qr.labels) : 0;
    const key = `${qr.shape}|${required}|${selfMask}|${qr.workspace ?? ""}`;
    qr.group = key;
    let g = this.groups.get(key);
    if (g) return g;
    g = {
      key,
      namespace: qr.namespace,
      runtimeKey: qr.runtimeKey,
      names: qr.names,
      amounts: qr.amounts,
      runs: new KeyedHeap<QueuedRun>((q) => q.key, before),
      constrained: required !== "" || qr.workspace !== undefined,
      affinity: withAffinity,
      selfMask,
      open: true,
    };
    g.open = !withAffinity || this.index.seedable(g);
    this.groups.set(key, g);
    if (!g.open) this.index.bind(g);
    return g;
  }
}

function hasRoom(free: Record<string, number>): boolean {
  for (const k in free) if ((free[k] as number) > 0) return true;
  return false;
}
