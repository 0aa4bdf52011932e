/**
 * The autoscaler, keyed by Runtime (namespace/name), for Runtimes with `spec.autoscaling`. Each
 * reconcile reads the pool's load from the scheduler's cache and queue (no API reads), decides
 * (`decide.ts`), then acts: scale up through the Deployment's scale subresource, or drain pods
 * for a scale-down — marked so the scheduler places nothing new on them, removed one by one once
 * they hold no Run (`pool-writes.ts`), given back when the load rises again or the drain times
 * out. Events on the Runtime, status.autoscaling, metrics. Triggered by events (Pending Runs,
 * pod and capacity changes: `autoscale-wiring.ts`), so a backlog is acted on in well under 1 s.
 */
import {
  API_VERSION,
  AutoscalingDefaults,
  durationOr,
  RUNTIME_KIND,
  type Runtime,
  type RuntimeStatus,
  runtimeCapacity,
} from "@kruntimes/api";
import type { Logger } from "pino";
import type { EventRecorder, EventType } from "../events/event-recorder.ts";
import type { Deployment } from "../kube-types.ts";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import type { PodInfo } from "../scheduler/cache/pod-info.ts";
import type { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import type { QueuedRun } from "../scheduler/queue/queued-run.ts";
import { kubeTime } from "../status/conditions.ts";
import { canonicalJson } from "../util/canonical-json.ts";
import type { Clock } from "../util/clock.ts";
import type { AutoscaleMetrics } from "./autoscale-metrics.ts";
import {
  type Decision,
  decide,
  pruneHistory,
  type Recommendation,
  type ScalePolicy,
  wantedReplicas,
} from "./decide.ts";
import { drainCandidates } from "./drain-candidates.ts";
import { poolLoad } from "./pool-load.ts";
import { type PoolWrites, replicasOwnedBy } from "./pool-writes.ts";

export interface AutoscalerDeps {
  runtimes: { get(key: string): Runtime | undefined };
  deployments: { get(key: string): Deployment | undefined };
  cache: SchedulerCache;
  queue: { queued(): Iterable<QueuedRun> };
  workspaces: { boundTo(podKey: string): ReadonlySet<string> };
  writes: PoolWrites;
  events: EventRecorder;
  metrics: AutoscaleMetrics;
  clock: Clock;
  log: Logger;
}

type AutoscalingStatus = NonNullable<RuntimeStatus["autoscaling"]>;

interface Draining {
  name: string;
  uid: string;
  sinceMs: number;
}

interface PoolState {
  history: Recommendation[];
  draining: Map<string, Draining>;
  /** Pod UIDs given back after a drain timeout, until when they are left alone. */
  resting: Map<string, number>;
  /** A scale write not yet seen in the Deployment informer: the count and until when to trust it. */
  written?: { replicas: number; untilMs: number };
  /** Released pods (out of their ReplicaSet) still to delete. */
  released: Map<string, Draining>;
  lastDecision?: AutoscalingStatus["lastDecision"];
  lastScaleTime?: string;
  /** When a trigger arrived that this reconcile has not answered yet (reaction metric). */
  triggeredAtMs?: number;
  /** status.autoscaling: the write in flight, the latest one to send after it, the last one sent. */
  statusWriting?: boolean;
  statusNext?: { ns: string; name: string; status: AutoscalingStatus; text: string };
  statusSent?: string;
}

/** How often a pool with draining pods is looked at without an event (their Runs ending). */
const DRAIN_POLL_MS = 1000;
/** A quiet pool is looked at this often. */
const RESYNC_MS = 30_000;

export class AutoscalerReconciler implements Reconciler {
  readonly name = "autoscaler";
  private readonly pools = new Map<string, PoolState>();

  constructor(private readonly d: AutoscalerDeps) {}

  /** Notes when an event that may need a scale-up came in (before the debounced reconcile). */
  triggered(key: string): void {
    const s = this.pools.get(key);
    if (s && s.triggeredAtMs === undefined) s.triggeredAtMs = this.d.clock.now();
  }

  /**
   * The waiting message of a Run whose autoscaled Runtime has no pod serving: it waits for the
   * pool to start from zero. Undefined when that is not the case.
   */
  zeroMessage(runtimeKey: string): string | undefined {
    const rt = this.d.runtimes.get(runtimeKey);
    if (!rt?.spec.autoscaling || this.d.cache.availableCount(runtimeKey) > 0) return undefined;
    const dep = this.d.deployments.get(runtimeKey);
    const written = this.pools.get(runtimeKey)?.written?.replicas;
    const from = Math.min(dep?.spec?.replicas ?? 0, written ?? Number.POSITIVE_INFINITY);
    if (from > 0 && this.d.cache.podsOf(runtimeKey).some((p) => p.ready)) return undefined;
    return `no pod ready; scaling Runtime ${rt.metadata.name} up from 0 (spec.autoscaling.minReplicas is ${rt.spec.autoscaling.minReplicas}): the Run starts when the first pod is ready`;
  }

  async reconcile(key: string): Promise<Result> {
    const rt = this.d.runtimes.get(key);
    if (!rt?.spec.autoscaling || rt.metadata.deletionTimestamp) return this.stop(key, rt);
    const [ns, name] = key.split("/") as [string, string];
    const dep = this.d.deployments.get(key);
    if (!dep) return Result.requeueAfter(1000);
    const now = this.d.clock.now();
    let s = this.pools.get(key);
    if (!s) {
      s = { history: [], draining: new Map(), resting: new Map(), released: new Map() };
      this.pools.set(key, s);
    }
    const policy = policyOf(rt);
    let current = this.currentReplicas(s, dep, now);
    const pods = this.d.cache.podsOf(key);
    const perPod = this.d.cache.runtime(key)?.capacity ?? runtimeCapacity(rt.spec);
    const load = poolLoad(key, perPod, pods, this.d.queue.queued());
    // The first look seeds the history with the count there is — less the pods a previous leader
    // was draining (their annotation says so): a restart neither scales down at once nor undoes a
    // scale-down under way.
    if (s.history.length === 0) {
      this.adoptAnnotated(pods, s);
      s.history.push({ atMs: now, replicas: Math.max(0, current - s.draining.size) });
    }
    s.history.push({ atMs: now, replicas: wantedReplicas(load, policy) });
    s.history = pruneHistory(s.history, policy, now);
    const decision = decide(current, s.history, load, policy, now);
    const drainTimeoutMs = durationOr(rt.spec.autoscaling.drainTimeout, 600_000);
    const triggeredAt = s.triggeredAtMs;
    s.triggeredAtMs = undefined;

    await this.deleteReleased(ns, s);
    this.adoptAnnotated(pods, s);
    // Own the replica count before anything else, at its current value: from then on the Runtime's
    // apply of the Deployment leaves the field to us (runtime/replicas-owner.ts).
    if (!s.written && !replicasOwnedBy(dep, this.d.writes.fieldManager))
      s.written = { replicas: await this.scale(ns, name, current), untilMs: now + 10_000 };
    for (const [uid, until] of s.resting) if (until <= now) s.resting.delete(uid);

    // Timed-out drains come back; pods gone meanwhile are forgotten.
    for (const [podKey, dr] of [...s.draining]) {
      const pod = this.d.cache.pod(podKey);
      if (!pod || pod.uid !== dr.uid) s.draining.delete(podKey);
      else if (pod.usage.runs.size > 0 && now - dr.sinceMs >= drainTimeoutMs) {
        await this.unmark(ns, podKey, dr, s);
        s.resting.set(dr.uid, now + drainTimeoutMs);
        this.act(
          rt,
          s,
          "DrainTimedOut",
          "Warning",
          current,
          `pod ${dr.name} still holds ${pod.usage.runs.size} Runs after ${rt.spec.autoscaling.drainTimeout ?? AutoscalingDefaults.drainTimeout}: put back in service, not removed`,
        );
      }
    }

    // More pods wanted than will stay: give back draining pods first (the fullest first).
    const keep = Math.max(0, current - decision.desired);
    if (s.draining.size > keep) {
      const back = [...s.draining].sort(
        (a, b) =>
          (this.d.cache.pod(b[0])?.usage.runs.size ?? 0) - (this.d.cache.pod(a[0])?.usage.runs.size ?? 0),
      );
      for (const [podKey, dr] of back.slice(0, s.draining.size - keep)) {
        await this.unmark(ns, podKey, dr, s);
        this.act(
          rt,
          s,
          "DrainCancelled",
          "Normal",
          current,
          `pod ${dr.name} back in service: ${decision.message}`,
        );
      }
    }

    if (decision.desired > current) {
      const writeStart = this.d.clock.now();
      s.written = { replicas: await this.scale(ns, name, decision.desired), untilMs: now + 10_000 };
      const done = this.d.clock.now();
      // The scale-up started when its write was sent; the write's own time is the apiserver's.
      if (triggeredAt !== undefined) this.d.metrics.reactSeconds.observe((writeStart - triggeredAt) / 1000);
      this.d.metrics.scaleWriteSeconds.observe((done - writeStart) / 1000);
      this.d.log.debug(
        {
          runtime: key,
          sinceEventMs: triggeredAt === undefined ? undefined : done - triggeredAt,
          writeMs: done - writeStart,
          reconcileMs: done - now,
        },
        "scale-up written",
      );
      s.lastScaleTime = kubeTime(this.d.clock.now());
      this.act(rt, s, decision.reason, "Normal", decision.desired, decision.message);
      current = decision.desired;
    } else if (decision.desired < current && s.draining.size < current - decision.desired) {
      await this.startDrain(rt, ns, pods, s, current, decision, now);
    }

    // Drained pods go, one write sequence each — at once when already empty. The mark is in the
    // cache before this, so nothing new was placed on them since.
    for (const [podKey, dr] of [...s.draining]) {
      const pod = this.d.cache.pod(podKey);
      if (!pod || decision.desired >= current || pod.usage.runs.size > 0) continue;
      await this.remove(rt, ns, name, pod, dr, s, current - 1, decision);
      current--;
    }

    this.d.metrics.desired.set({ runtime: key }, decision.desired);
    this.d.metrics.current.set({ runtime: key }, current);
    this.d.metrics.draining.set({ runtime: key }, s.draining.size);
    this.writeStatus(rt, s, current, decision);

    if (s.draining.size > 0 || s.released.size > 0) return Result.requeueAfter(DRAIN_POLL_MS);
    if (decision.recheckAtMs !== undefined)
      return Result.requeueAfter(Math.min(RESYNC_MS, decision.recheckAtMs - now + 10));
    return Result.requeueAfter(RESYNC_MS);
  }

  /** The Deployment's count, or our own write while the informer has not caught up with it. */
  private currentReplicas(s: PoolState, dep: Deployment, now: number): number {
    const seen = dep.spec?.replicas ?? 1;
    if (s.written && (s.written.replicas === seen || s.written.untilMs < now)) s.written = undefined;
    return s.written?.replicas ?? seen;
  }

  private async startDrain(
    rt: Runtime,
    ns: string,
    pods: readonly PodInfo[],
    s: PoolState,
    current: number,
    decision: Decision,
    now: number,
  ): Promise<void> {
    // A rollout moves pods between ReplicaSets: wait for it to finish.
    const hashes = new Set(pods.filter((p) => !p.terminating).map((p) => p.templateHash));
    if (hashes.size > 1) return;
    const need = current - decision.desired - s.draining.size;
    const picked = drainCandidates(
      pods,
      need,
      {
        boundWorkspaces: (podKey) => this.d.workspaces.boundTo(podKey).size,
        resting: (p) => s.resting.has(p.uid),
      },
      now,
    );
    for (const p of picked) {
      this.d.cache.setDrainMark(p.key, true);
      s.draining.set(p.key, { name: p.name, uid: p.uid, sinceMs: now });
      try {
        await this.d.writes.mark(ns, p.name, p.uid, true);
        this.d.metrics.writes.inc({ what: "mark", result: "ok" });
      } catch (e) {
        this.d.metrics.writes.inc({ what: "mark", result: "error" });
        this.d.cache.setDrainMark(p.key, false);
        s.draining.delete(p.key);
        throw e;
      }
    }
    if (picked.length > 0)
      this.act(
        rt,
        s,
        "ScaleDownStarted",
        "Normal",
        decision.desired,
        `draining ${picked.map((p) => `${p.name} (${p.usage.runs.size} Runs)`).join(", ")}: no new Runs there, removed once empty. ${decision.message}`,
      );
  }

  private async remove(
    rt: Runtime,
    ns: string,
    name: string,
    pod: PodInfo,
    dr: Draining,
    s: PoolState,
    replicas: number,
    decision: Decision,
  ): Promise<void> {
    await this.counted("release", () => this.d.writes.release(ns, dr.name, dr.uid));
    s.draining.delete(pod.key);
    s.released.set(pod.key, dr);
    s.written = { replicas: await this.scale(ns, name, replicas), untilMs: this.d.clock.now() + 10_000 };
    s.lastScaleTime = kubeTime(this.d.clock.now());
    await this.deleteReleased(ns, s);
    this.act(
      rt,
      s,
      "ScaleDown",
      "Normal",
      replicas,
      `removed the drained pod ${dr.name}; ${decision.message}`,
    );
  }

  private async deleteReleased(ns: string, s: PoolState): Promise<void> {
    for (const [podKey, dr] of [...s.released]) {
      await this.counted("delete", () => this.d.writes.delete(ns, dr.name, dr.uid));
      s.released.delete(podKey);
    }
  }

  private async scale(ns: string, name: string, replicas: number): Promise<number> {
    return this.counted("scale", () => this.d.writes.scale(ns, name, replicas));
  }

  private async unmark(ns: string, podKey: string, dr: Draining, s: PoolState): Promise<void> {
    await this.counted("unmark", () => this.d.writes.mark(ns, dr.name, dr.uid, false));
    s.draining.delete(podKey);
    this.d.cache.setDrainMark(podKey, false);
  }

  /** Pods carrying the drain annotation this process did not mark (a previous leader did). */
  private adoptAnnotated(pods: readonly PodInfo[], s: PoolState): void {
    for (const p of pods)
      if (p.drainAnnotated && !p.terminating && !s.draining.has(p.key))
        s.draining.set(p.key, { name: p.name, uid: p.uid, sinceMs: this.d.clock.now() });
  }

  private async counted<T>(what: string, write: () => Promise<T>): Promise<T> {
    try {
      const out = await write();
      this.d.metrics.writes.inc({ what, result: "ok" });
      return out;
    } catch (e) {
      this.d.metrics.writes.inc({ what, result: "error" });
      throw e;
    }
  }

  private act(
    rt: Runtime,
    s: PoolState,
    reason: string,
    type: EventType,
    replicas: number,
    message: string,
  ): void {
    const time = kubeTime(this.d.clock.now());
    s.lastDecision = { reason, message: message.slice(0, 1024), replicas, time };
    this.d.metrics.decisions.inc({ reason });
    this.d.log.info({ runtime: `${rt.metadata.namespace}/${rt.metadata.name}`, reason, replicas }, message);
    this.d.events.record(
      {
        apiVersion: API_VERSION,
        kind: RUNTIME_KIND,
        namespace: rt.metadata.namespace ?? "",
        name: rt.metadata.name ?? "",
        ...(rt.metadata.uid ? { uid: rt.metadata.uid } : {}),
      },
      type,
      reason,
      message,
    );
  }

  /**
   * Writes status.autoscaling in the background, one write in flight per Runtime and only the
   * latest status after it: the next reconcile (a backlog's scale-up) never waits for a status
   * write. A failed write is retried by the next reconcile (it compares with what the informer has).
   */
  private writeStatus(rt: Runtime, s: PoolState, current: number, decision: Decision): void {
    const status: AutoscalingStatus = {
      currentReplicas: current,
      desiredReplicas: decision.desired,
      ...(s.lastScaleTime ? { lastScaleTime: s.lastScaleTime } : {}),
      ...(s.lastDecision ? { lastDecision: s.lastDecision } : {}),
      ...(s.draining.size > 0 ? { drainingPods: [...s.draining.values()].map((d) => d.name).sort() } : {}),
    };
    const seen = rt.status?.autoscaling;
    // After a restart the last decision is only in the status: keep showing it.
    if (!s.lastDecision && seen?.lastDecision) {
      status.lastDecision = seen.lastDecision;
      if (seen.lastScaleTime) status.lastScaleTime = seen.lastScaleTime;
    }
    const text = canonicalJson(status);
    if ((seen && canonicalJson(seen) === text) || s.statusSent === text) return;
    s.statusNext = { ns: rt.metadata.namespace ?? "", name: rt.metadata.name ?? "", status, text };
    if (!s.statusWriting) void this.drainStatus(s);
  }

  private async drainStatus(s: PoolState): Promise<void> {
    s.statusWriting = true;
    try {
      for (let next = s.statusNext; next; next = s.statusNext) {
        s.statusNext = undefined;
        try {
          await this.counted("status", () => this.d.writes.status(next.ns, next.name, next.status));
          s.statusSent = next.text;
        } catch (err) {
          s.statusSent = undefined;
          this.d.log.warn(
            { err, runtime: `${next.ns}/${next.name}` },
            "writing status.autoscaling failed; the next reconcile retries",
          );
        }
      }
    } finally {
      s.statusWriting = false;
    }
  }

  /** Autoscaling is off or the Runtime is gone: give drained pods back and forget the pool. */
  private async stop(key: string, rt: Runtime | undefined): Promise<Result> {
    const s = this.pools.get(key);
    if (s) {
      const ns = key.slice(0, key.indexOf("/"));
      if (rt && !rt.metadata.deletionTimestamp)
        for (const [podKey, dr] of [...s.draining]) await this.unmark(ns, podKey, dr, s);
      else for (const podKey of s.draining.keys()) this.d.cache.setDrainMark(podKey, false);
      await this.deleteReleased(ns, s);
      this.pools.delete(key);
    }
    this.d.metrics.forget(key);
    return Result.done();
  }
}

export function policyOf(rt: Runtime): ScalePolicy {
  const a = rt.spec.autoscaling;
  return {
    minReplicas: a?.minReplicas ?? 1,
    maxReplicas: a?.maxReplicas ?? 1,
    targetUtilization: a?.targetUtilization ?? AutoscalingDefaults.targetUtilization,
    scaleUpWindowMs: durationOr(a?.scaleUpStabilization, 0),
    scaleDownDelayMs: durationOr(a?.scaleDownDelay, 120_000),
  };
}
