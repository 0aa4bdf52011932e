/**
 * Capacity held by Runs, per pod incarnation (pod key + UID). An account is either confirmed
 * (the informer shows the Run assigned there) or assumed (we bound it, the informer has not shown
 * it yet); assumed accounts expire so a lost confirmation cannot hold capacity forever.
 */
import type { CompiledTerm } from "./affinity-terms.ts";
import type { Labels } from "./label-selector.ts";
import { type PlacedRun, PlacementIndex } from "./placement-index.ts";
import { PodUsage } from "./pod-info.ts";

/** What Run affinity needs to know of a Run that holds a pod. */
export interface Placement {
  readonly namespace: string;
  readonly labels: Labels;
  /** Required anti-affinity terms of the Run (other Runs must respect them). */
  readonly anti?: readonly CompiledTerm[];
}

export interface Account {
  readonly podKey: string;
  readonly podUID: string;
  attempt: number;
  readonly names: readonly string[];
  readonly amounts: readonly number[];
  assumed: boolean;
  untilMs: number;
  readonly usage: PodUsage;
  /** The Run's entry in the placement index. */
  readonly placed?: PlacedRun;
}

export class RunAccounts {
  private readonly accounts = new Map<string, Account>();
  private readonly usages = new Map<string, PodUsage>();
  private readonly assumedKeys = new Set<string>();

  /**
   * `onRelease` hears of every usage that got smaller, after the placement index has dropped
   * the Run. The index holds every account's labels, confirmed and assumed alike.
   */
  constructor(
    private readonly onRelease: (usage: PodUsage) => void,
    readonly placements = new PlacementIndex(),
  ) {}

  get size(): number {
    return this.accounts.size;
  }
  get assumedCount(): number {
    return this.assumedKeys.size;
  }

  /** Capacity held by every account, summed over pod incarnations, by resource (the held gauge). */
  heldTotals(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const u of this.usages.values())
      for (const [n, v] of Object.entries(u.used)) out[n] = (out[n] ?? 0) + v;
    return out;
  }

  get(runKey: string): Account | undefined {
    return this.accounts.get(runKey);
  }

  usageFor(podKey: string, uid: string): PodUsage {
    const id = `${podKey}@${uid}`;
    let u = this.usages.get(id);
    if (!u) {
      u = new PodUsage(podKey, uid);
      this.usages.set(id, u);
    }
    return u;
  }

  /** Forgets a usage no pod points at and no Run holds. */
  dropIfEmpty(usage: PodUsage): void {
    if (!usage.linked && usage.runs.size === 0) this.usages.delete(`${usage.podKey}@${usage.uid}`);
  }

  /** Run keys held on any incarnation of the pod. */
  runsOn(podKey: string): string[] {
    const out: string[] = [];
    for (const u of this.usages.values()) if (u.podKey === podKey) out.push(...u.runs);
    return out;
  }

  hold(
    runKey: string,
    podKey: string,
    podUID: string,
    attempt: number,
    names: readonly string[],
    amounts: readonly number[],
    assumed: boolean,
    untilMs: number,
    exclusive = false,
    placement?: Placement,
  ): void {
    this.release(runKey);
    const usage = this.usageFor(podKey, podUID);
    if (exclusive) usage.exclusive.add(runKey);
    usage.add(runKey, names, amounts);
    const placed: PlacedRun | undefined = placement && {
      key: runKey,
      namespace: placement.namespace,
      podKey,
      domain: usage.domain,
      labels: placement.labels,
      ...(placement.anti?.length ? { anti: placement.anti } : {}),
    };
    this.accounts.set(runKey, {
      podKey,
      podUID,
      attempt,
      names,
      amounts,
      assumed,
      untilMs,
      usage,
      ...(placed ? { placed } : {}),
    });
    if (assumed) this.assumedKeys.add(runKey);
    if (placed) this.placements.add(placed);
  }

  confirm(runKey: string): void {
    const acc = this.accounts.get(runKey);
    if (!acc) return;
    acc.assumed = false;
    this.assumedKeys.delete(runKey);
  }

  release(runKey: string): void {
    const acc = this.accounts.get(runKey);
    if (!acc) return;
    this.accounts.delete(runKey);
    this.assumedKeys.delete(runKey);
    acc.usage.remove(runKey, acc.names, acc.amounts);
    acc.usage.exclusive.delete(runKey);
    this.dropIfEmpty(acc.usage);
    if (acc.placed) this.placements.remove(runKey, acc.placed.namespace);
    this.onRelease(acc.usage);
  }

  /** Releases assumed accounts past their deadline; returns their Run keys. */
  expire(nowMs: number): string[] {
    const out: string[] = [];
    for (const key of this.assumedKeys) {
      const acc = this.accounts.get(key);
      if (acc && acc.untilMs <= nowMs) out.push(key);
    }
    for (const key of out) this.release(key);
    return out;
  }
}
