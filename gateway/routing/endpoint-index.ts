/**
 * Pod UID → runtimed dataplane address, from the EndpointSlices of the Runtimes' headless Services
 * (each endpoint's `targetRef.uid` is the pod UID, its first address the pod IP, the slice's port
 * named `dataplane` runtimed's dataplane port). Level-true: a slice's update replaces everything
 * that slice said before; a delete forgets it. Waiters learn at once when a pod appears.
 */
import type { KubeObject } from "@kruntimes/kube";

export const DATAPLANE_PORT_NAME = "dataplane";

export interface EndpointSlice extends KubeObject {
  addressType?: string;
  endpoints?: {
    addresses?: string[];
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
    targetRef?: { kind?: string; uid?: string; name?: string; namespace?: string };
  }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

export interface PodAddress {
  /** host:port of runtimed's dataplane listener (IPv6 in brackets). */
  address: string;
  pod: string;
  ready: boolean;
  /** The pod is being deleted (the slice's `terminating` condition): it takes no new calls. */
  terminating: boolean;
}

const sliceKey = (s: EndpointSlice) => `${s.metadata.namespace}/${s.metadata.name}`;

export class EndpointIndex {
  private readonly bySlice = new Map<string, string[]>();
  private readonly byPod = new Map<string, PodAddress>();
  private readonly waiters = new Map<string, Set<() => void>>();

  get size(): number {
    return this.byPod.size;
  }

  get(podUID: string): PodAddress | undefined {
    return this.byPod.get(podUID);
  }

  upsert(slice: EndpointSlice): void {
    this.remove(slice);
    const port = slice.ports?.find((p) => p.name === DATAPLANE_PORT_NAME)?.port;
    if (!port) return;
    const pods: string[] = [];
    for (const ep of slice.endpoints ?? []) {
      const uid = ep.targetRef?.uid;
      const ip = ep.addresses?.[0];
      if (!uid || !ip) continue;
      const host = slice.addressType === "IPv6" || ip.includes(":") ? `[${ip}]` : ip;
      this.byPod.set(uid, {
        address: `${host}:${port}`,
        pod: ep.targetRef?.name ?? "",
        ready: ep.conditions?.ready !== false,
        terminating: ep.conditions?.terminating === true,
      });
      pods.push(uid);
      const ws = this.waiters.get(uid);
      if (ws) {
        this.waiters.delete(uid);
        for (const w of ws) w();
      }
    }
    this.bySlice.set(sliceKey(slice), pods);
  }

  remove(slice: EndpointSlice): void {
    const key = sliceKey(slice);
    for (const uid of this.bySlice.get(key) ?? []) this.byPod.delete(uid);
    this.bySlice.delete(key);
  }

  /** The pod's address, waiting up to `ms` for a slice to name it. */
  async waitFor(podUID: string, ms: number): Promise<PodAddress | undefined> {
    const now = this.byPod.get(podUID);
    if (now || ms <= 0) return now;
    const waiters = this.waiters.get(podUID) ?? new Set<() => void>();
    this.waiters.set(podUID, waiters);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
    if (waiters.size === 0 && this.waiters.get(podUID) === waiters) this.waiters.delete(podUID);
    return this.byPod.get(podUID);
  }
}
