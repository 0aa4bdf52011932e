/**
 * A Runtime Pod as the scheduler tracks it: readiness from the Pod, heartbeat from runtimed's
 * Lease, capacity from the pod's annotation, and the usage of the Runs held on it.
 */
import { Annotations, Labels } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import { type Pod, podReady } from "../../kube-types.ts";
import type { PodView, Unavailability } from "../framework/types.ts";
import { type Heartbeat, isFresh } from "./heartbeat.ts";
import { domainOf } from "./placement-index.ts";

/** The pod annotation runtimed and the scheduler agree on: JSON of the capacity map. */
export const CAPACITY_ANNOTATION = "kruntimes.io/capacity";
/**
 * Set by the autoscaler on a pod it drains for a scale-down (value: when, RFC 3339): the
 * scheduler places no new Run there; the pod is removed once it holds none.
 */
export const DRAIN_ANNOTATION = "kruntimes.io/scale-down";

/** Usage of one pod incarnation (name + UID): Runs held and the sum of their requests. */
export class PodUsage {
  readonly used: Record<string, number> = {};
  readonly runs = new Set<string>();
  /** A live PodInfo points at this usage (it is kept even while empty). */
  linked = false;
  /** A session ended on this incarnation: it is never offered again (the controller replaces it). */
  spent = false;
  /** Session Runs holding it (at most one). */
  readonly exclusive = new Set<string>();
  /**
   * `<namespace>/<pod>@<uid>`, Run affinity's topology domain: one string per incarnation, so
   * the placement index and the pod share it (map lookups compare the same string).
   */
  readonly domain: string;

  constructor(
    readonly podKey: string,
    readonly uid: string,
  ) {
    this.domain = domainOf(podKey, uid);
  }

  add(runKey: string, names: readonly string[], amounts: readonly number[]): void {
    this.runs.add(runKey);
    for (let i = 0; i < names.length; i++) {
      const n = names[i] as string;
      this.used[n] = (this.used[n] ?? 0) + (amounts[i] as number);
    }
  }

  remove(runKey: string, names: readonly string[], amounts: readonly number[]): void {
    if (!this.runs.delete(runKey)) return;
    for (let i = 0; i < names.length; i++) {
      const n = names[i] as string;
      this.used[n] = (this.used[n] ?? 0) - (amounts[i] as number);
    }
  }
}

export function parseCapacity(text: string | undefined): Record<string, number> | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
    const out: Record<string, number> = {};
    for (const [k, n] of Object.entries(v)) {
      if (typeof n !== "number" || !Number.isFinite(n) || n < 0) return undefined;
      out[k] = n;
    }
    return out;
  } catch {
    return undefined;
  }
}

const NONE: Record<string, number> = Object.freeze({}) as Record<string, number>;

export class PodInfo implements PodView {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly runtimeKey: string;
  uid = "";
  node = "";
  ready = false;
  terminating = false;
  capacity: Record<string, number> = NONE;
  hasCapacity = false;
  /** The `kruntimes.io/template-hash` the pod was created from (rollout progress). */
  templateHash = "";
  heartbeat: Heartbeat | undefined;
  usage: PodUsage;
  /** The pod carries the drain annotation. */
  drainAnnotated = false;
  /** This process marked it for draining (before the annotation comes back through the informer). */
  drainMarked = false;

  constructor(pod: Pod, usage: PodUsage) {
    this.key = keyOf(pod);
    this.namespace = pod.metadata.namespace ?? "";
    this.name = pod.metadata.name ?? "";
    this.runtimeKey = `${this.namespace}/${pod.metadata.labels?.[Labels.runtime] ?? ""}`;
    this.usage = usage;
    usage.linked = true;
    this.update(pod);
  }

  /** Refreshes the fields read from the Pod; the UID is replaced only with a new incarnation. */
  update(pod: Pod): void {
    this.uid = pod.metadata.uid ?? "";
    this.node = pod.spec?.nodeName ?? "";
    this.ready = podReady(pod);
    this.terminating = Boolean(pod.metadata.deletionTimestamp);
    const cap = parseCapacity(pod.metadata.annotations?.[CAPACITY_ANNOTATION]);
    this.capacity = cap ?? NONE;
    this.hasCapacity = cap !== undefined;
    this.templateHash = pod.metadata.annotations?.[Annotations.templateHash] ?? "";
    this.drainAnnotated = pod.metadata.annotations?.[DRAIN_ANNOTATION] !== undefined;
  }

  /** Chosen for a scale-down: takes no new Run. */
  get draining(): boolean {
    return this.drainAnnotated || this.drainMarked;
  }

  /** The fields the Runtime's status is computed from, as one comparable string. */
  statusKey(nowMs: number): string {
    return `${this.ready}|${this.terminating}|${this.templateHash}|${this.isAvailable(nowMs)}|${this.draining}`;
  }

  /** The pod incarnation, `<namespace>/<pod>@<uid>`: Run affinity's topology domain. */
  get domain(): string {
    return this.usage.domain;
  }
  get used(): Record<string, number> {
    return this.usage.used;
  }
  get occupied(): boolean {
    return this.usage.runs.size > 0;
  }
  get sealed(): boolean {
    return this.usage.spent || this.usage.exclusive.size > 0;
  }

  unavailability(nowMs: number): Unavailability | undefined {
    if (this.terminating) return "Terminating";
    if (this.draining) return "Draining";
    if (!this.ready) return "NotReady";
    if (!this.hasCapacity) return "NoCapacity";
    const hb = this.heartbeat;
    if (!hb) return "NoHeartbeat";
    if (hb.holder !== this.uid) return "HeartbeatNotOwned";
    if (!isFresh(hb, nowMs)) return "HeartbeatStale";
    return undefined;
  }

  isAvailable(nowMs: number): boolean {
    return this.unavailability(nowMs) === undefined;
  }

  /** Free amount of `name` (may be negative after a capacity decrease). */
  free(name: string): number {
    return (this.capacity[name] ?? 0) - (this.usage.used[name] ?? 0);
  }
}
