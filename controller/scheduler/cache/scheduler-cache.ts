/**
 * The scheduler's view of the cluster, fed by informer events and by its own assumptions:
 * Runtimes (capacity), Runtime Pods (readiness, heartbeat, capacity), and capacity in use per pod
 * from Run state. Every scheduling cycle reads it synchronously, so it is the cycle's snapshot.
 * It tells its listener about the transitions that matter: capacity freed on an available pod,
 * a pod becoming available, a pod in trouble (gone, replaced, terminating, heartbeat stale).
 */
import { type Run, type Runtime, runtimeCapacity } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Lease, Pod } from "../../kube-types.ts";
import type { Clock } from "../../util/clock.ts";
import type { Timers } from "../../util/timers.ts";
import type { RunRequest, RuntimeView } from "../framework/types.ts";
import { holdsCapacity, isPending, requestOf, spentPodOf } from "../run-request.ts";
import { compiledAffinity } from "./affinity-terms.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { HeartbeatTracker } from "./heartbeat-tracker.ts";
import { type Labels, sameLabels } from "./label-selector.ts";
import type { PlacementIndex } from "./placement-index.ts";
import { PodInfo, type PodUsage } from "./pod-info.ts";
import { type Placement, RunAccounts } from "./run-accounts.ts";
import { RuntimePodIndex } from "./runtime-pod-index.ts";

export type FreedBy = "capacity_released" | "pod_available";

export interface CacheListener {
  /** `pod` is available and has more free capacity than before. */
  podFreed(pod: PodInfo, by: FreedBy): void;
  /** A pod of the Runtime appeared, went, or changed readiness, availability or template. */
  runtimePodsChanged(runtimeKey: string): void;
  /** The pod is gone, replaced, terminating, or its heartbeat is stale: check its Runs. */
  podTrouble(podKey: string): void;
  /** The Runtime appeared, changed capacity, or disappeared. */
  runtimeChanged(runtimeKey: string): void;
}

export interface CacheOptions {
  /** A heartbeat older than this puts the pod "in trouble" (recovery). */
  staleAfterMs: number;
  /** How long an assumed (bound, unconfirmed) Run holds capacity before it expires. */
  assumeTtlMs: number;
}

export class SchedulerCache {
  private readonly runtimes = new Map<string, RuntimeView>();
  private readonly pods = new Map<string, PodInfo>();
  private readonly podsByRuntime = new RuntimePodIndex();
  private readonly heartbeats: HeartbeatTracker;
  readonly accounts: RunAccounts;
  private readonly assumeTtlMs: number;

  constructor(
    private readonly listener: CacheListener,
    private readonly clock: Clock,
    timers: Timers,
    opts: CacheOptions,
  ) {
    this.accounts = new RunAccounts((usage) => this.released(usage));
    this.assumeTtlMs = opts.assumeTtlMs;
    this.heartbeats = new HeartbeatTracker(timers, opts.staleAfterMs, {
      expired: (podKey) => {
        const info = this.pods.get(podKey);
        if (info) this.listener.runtimePodsChanged(info.runtimeKey);
      },
      stale: (podKey) => this.listener.podTrouble(podKey),
    });
  }

  runtime(key: string): RuntimeView | undefined {
    return this.runtimes.get(key);
  }
  pod(key: string): PodInfo | undefined {
    return this.pods.get(key);
  }
  /** Pods of a Runtime, in a stable array the cycle iterates. */
  podsOf(runtimeKey: string): readonly PodInfo[] {
    return this.podsByRuntime.get(runtimeKey);
  }
  /** Placed Runs (confirmed and assumed) by label and pod, for Run affinity. */
  get placements(): PlacementIndex {
    return this.accounts.placements;
  }
  heartbeatOf(podKey: string): Heartbeat | undefined {
    return this.heartbeats.get(podKey);
  }
  get podCount(): number {
    return this.pods.size;
  }

  upsertRuntime(rt: Runtime): void {
    const key = keyOf(rt);
    const capacity = runtimeCapacity(rt.spec);
    const prev = this.runtimes.get(key);
    if (prev && sameMap(prev.capacity, capacity)) return;
    this.runtimes.set(key, { key, capacity });
    this.listener.runtimeChanged(key);
  }

  deleteRuntime(key: string): void {
    if (this.runtimes.delete(key)) this.listener.runtimeChanged(key);
  }

  upsertPod(pod: Pod): void {
    const key = keyOf(pod);
    const now = this.clock.now();
    let info = this.pods.get(key);
    const wasAvailable = info?.isAvailable(now) ?? false;
    const wasTerminating = info?.terminating ?? false;
    const oldUid = info?.uid;
    const oldStatusKey = info?.statusKey(now);
    if (!info) {
      info = new PodInfo(pod, this.accounts.usageFor(key, pod.metadata.uid ?? ""));
      info.heartbeat = this.heartbeats.get(key);
      this.pods.set(key, info);
      this.podsByRuntime.add(info);
    } else {
      info.update(pod);
      if (info.uid !== oldUid) {
        info.usage.linked = false;
        this.accounts.dropIfEmpty(info.usage);
        info.usage = this.accounts.usageFor(key, info.uid);
        info.usage.linked = true;
      }
    }
    this.afterChange(info, wasAvailable, now);
    if (info.statusKey(now) !== oldStatusKey) this.listener.runtimePodsChanged(info.runtimeKey);
    if ((oldUid !== undefined && oldUid !== info.uid) || (info.terminating && !wasTerminating)) {
      this.listener.podTrouble(key);
    }
  }

  deletePod(pod: Pod): void {
    const key = keyOf(pod);
    const info = this.pods.get(key);
    if (!info) return;
    this.pods.delete(key);
    this.podsByRuntime.remove(info);
    info.usage.linked = false;
    this.accounts.dropIfEmpty(info.usage);
    this.listener.runtimePodsChanged(info.runtimeKey);
    this.listener.podTrouble(key);
  }

  upsertLease(lease: Lease): void {
    const key = keyOf(lease);
    const now = this.clock.now();
    const hb = this.heartbeats.observe(key, lease, now);
    const info = this.pods.get(key);
    if (!info) return;
    const wasAvailable = info.isAvailable(now);
    info.heartbeat = hb;
    this.afterChange(info, wasAvailable, now);
  }

  /** The Lease watch failed and was relisted: see HeartbeatTracker.rebase. */
  leasesRelisted(): void {
    this.heartbeats.rebase(this.clock.now());
  }

  deleteLease(lease: Lease): void {
    const key = keyOf(lease);
    this.heartbeats.remove(key);
    const info = this.pods.get(key);
    if (!info) return;
    const wasAvailable = info.isAvailable(this.clock.now());
    info.heartbeat = undefined;
    this.afterChange(info, wasAvailable, this.clock.now());
    this.listener.podTrouble(key);
  }

  /** Accounts the Run from its observed state (capacity held while assigned and non-terminal). */
  upsertRun(run: Run): void {
    const key = keyOf(run);
    const a = run.status?.assignment;
    const holding = holdsCapacity(run) && a !== undefined;
    const acc = this.accounts.get(key);
    if (acc?.assumed) {
      if (holding && a.podUID === acc.podUID && a.attempt === acc.attempt) {
        this.accounts.confirm(key);
        this.relabel(acc.placed, run);
        return;
      }
      // An event from before our bind landed: keep the assumption until the bind shows up.
      if (isPending(run) && (run.status?.attempt ?? 0) <= acc.attempt) return;
    }
    if (!holding) {
      // A session ended: its pod is spent before its capacity is released (nothing lands there).
      const spent = spentPodOf(run);
      if (spent) this.accounts.usageFor(`${run.metadata.namespace}/${spent.pod}`, spent.podUID).spent = true;
      this.accounts.release(key);
      return;
    }
    const podKey = `${run.metadata.namespace}/${a.pod}`;
    if (acc && !acc.assumed && acc.podKey === podKey && acc.podUID === a.podUID) {
      acc.attempt = a.attempt;
      this.relabel(acc.placed, run);
      return;
    }
    const req = requestOf(run);
    this.accounts.hold(
      key,
      podKey,
      a.podUID,
      a.attempt,
      req.names,
      req.amounts,
      false,
      0,
      req.exclusive,
      placementOf(req),
    );
  }

  /** Labels are mutable: a placed Run relabelled counts for affinity with its new labels. */
  private relabel(placed: { key: string; namespace: string; labels: Labels } | undefined, run: Run): void {
    const labels = run.metadata.labels ?? NO_LABELS;
    if (placed && !sameLabels(placed.labels, labels)) {
      this.accounts.placements.relabel(placed.key, placed.namespace, labels);
    }
  }

  deleteRun(key: string): void {
    this.accounts.release(key);
  }

  /**
   * The autoscaler chose (or un-chose) the pod for a scale-down: it takes no new Run from now on,
   * before its annotation comes back through the informer. Un-marking wakes parked Runs.
   */
  setDrainMark(podKey: string, on: boolean): void {
    const info = this.pods.get(podKey);
    if (!info || info.drainMarked === on) return;
    const now = this.clock.now();
    const wasAvailable = info.isAvailable(now);
    const oldStatusKey = info.statusKey(now);
    info.drainMarked = on;
    this.afterChange(info, wasAvailable, now);
    if (info.statusKey(now) !== oldStatusKey) this.listener.runtimePodsChanged(info.runtimeKey);
  }

  /** A session used this pod incarnation: it is never offered again (the pod is replaced). */
  markSpent(podKey: string, podUID: string): void {
    this.accounts.usageFor(podKey, podUID).spent = true;
  }

  /**
   * Reserve: the Run holds capacity on `pod` from now on, until confirmed or forgotten; its
   * labels count for other Runs' affinity at once, like a confirmed assignment.
   */
  assume(runKey: string, pod: PodInfo, attempt: number, req: RunRequest) {
    const until = this.clock.now() + this.assumeTtlMs;
    this.accounts.hold(
      runKey,
      pod.key,
      pod.uid,
      attempt,
      req.names,
      req.amounts,
      true,
      until,
      req.exclusive,
      placementOf(req),
    );
  }

  /** Undo an assumption (the bind failed for sure). */
  forget(runKey: string): void {
    if (this.accounts.get(runKey)?.assumed) this.accounts.release(runKey);
  }

  isAssumed(runKey: string): boolean {
    return this.accounts.get(runKey)?.assumed ?? false;
  }

  /** Drops assumptions older than the TTL; returns their Run keys. */
  expireAssumed(): string[] {
    return this.accounts.expire(this.clock.now());
  }

  /** Available pods of a Runtime right now. */
  availableCount(runtimeKey: string): number {
    const now = this.clock.now();
    let n = 0;
    for (const p of this.podsOf(runtimeKey)) if (p.isAvailable(now)) n++;
    return n;
  }

  private released(usage: PodUsage): void {
    if (!usage.linked) return;
    const info = this.pods.get(usage.podKey);
    if (info?.usage === usage && info.isAvailable(this.clock.now())) {
      this.listener.podFreed(info, "capacity_released");
    }
  }

  private afterChange(info: PodInfo, wasAvailable: boolean, now: number): void {
    const available = info.isAvailable(now);
    if (available === wasAvailable) return;
    this.listener.runtimePodsChanged(info.runtimeKey);
    if (available) this.listener.podFreed(info, "pod_available");
  }
}

const NO_LABELS: Labels = Object.freeze({});

function placementOf(req: RunRequest): Placement {
  const anti = compiledAffinity(req.affinity)?.requiredAnti;
  return { namespace: req.namespace, labels: req.labels, ...(anti?.length ? { anti } : {}) };
}

function sameMap(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}
