/**
 * Parked (unschedulable) Runs of one Runtime, grouped by request shape. A freed pod wakes, per
 * shape, only as many Runs as its free capacity can hold — never the whole pool.
 */
import type { QueuedRun } from "./queued-run.ts";

interface ShapeGroup {
  readonly names: readonly string[];
  readonly amounts: readonly number[];
  readonly runs: Map<string, QueuedRun>;
}

export class ParkedPool {
  private readonly groups = new Map<string, ShapeGroup>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(qr: QueuedRun): void {
    let g = this.groups.get(qr.shape);
    if (!g) {
      g = { names: qr.names, amounts: qr.amounts, runs: new Map() };
      this.groups.set(qr.shape, g);
    }
    if (!g.runs.has(qr.key)) this.count++;
    g.runs.set(qr.key, qr);
  }

  remove(qr: QueuedRun): boolean {
    const g = this.groups.get(qr.shape);
    if (!g?.runs.delete(qr.key)) return false;
    this.count--;
    if (g.runs.size === 0) this.groups.delete(qr.shape);
    return true;
  }

  /**
   * Takes the Runs that fit into `free` (name → amount), oldest-parked first per shape, and
   * subtracts what they take from `free`.
   */
  takeFitting(free: Record<string, number>): QueuedRun[] {
    const out: QueuedRun[] = [];
    for (const [shape, g] of this.groups) {
      let k = Number.POSITIVE_INFINITY;
      for (let i = 0; i < g.names.length; i++) {
        const amount = g.amounts[i] as number;
        if (amount > 0) k = Math.min(k, Math.floor((free[g.names[i] as string] ?? 0) / amount));
      }
      if (k <= 0) continue;
      let taken = 0;
      for (const qr of g.runs.values()) {
        if (taken >= k) break;
        out.push(qr);
        taken++;
      }
      for (let i = out.length - taken; i < out.length; i++) g.runs.delete((out[i] as QueuedRun).key);
      this.count -= taken;
      if (g.runs.size === 0) this.groups.delete(shape);
      for (let i = 0; i < g.names.length; i++) {
        const name = g.names[i] as string;
        free[name] = (free[name] ?? 0) - taken * (g.amounts[i] as number);
      }
    }
    return out;
  }

  takeAll(): QueuedRun[] {
    const out: QueuedRun[] = [];
    for (const g of this.groups.values()) out.push(...g.runs.values());
    this.groups.clear();
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
}
