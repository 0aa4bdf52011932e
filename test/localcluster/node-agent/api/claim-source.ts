/**
 * PersistentVolumeClaims and the PersistentVolumes they are bound to, read with the node's
 * identity: the Node authorizer allows a claim only when a pod bound to this node uses it, and a
 * volume only when such a claim is bound to it — the same reads a kubelet makes. A missing object
 * is `undefined`; other API errors propagate so the pod sync retries with backoff.
 */
import { isNotFound, type KubeClient, path } from "@kruntimes/kube";
import type { PersistentVolume, PersistentVolumeClaim } from "./types.ts";

const PVCS = { version: "v1", plural: "persistentvolumeclaims" } as const;
const PVS = { version: "v1", plural: "persistentvolumes" } as const;

export interface ClaimSource {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  volume(name: string): Promise<PersistentVolume | undefined>;
}

export class ApiClaimSource implements ClaimSource {
  constructor(private readonly client: KubeClient) {}

  private async getOrUndefined<T>(p: string): Promise<T | undefined> {
    try {
      return await this.client.get<T>(p);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
    return this.getOrUndefined(path(PVCS, namespace, name));
  }

  volume(name: string): Promise<PersistentVolume | undefined> {
    return this.getOrUndefined(path(PVS, undefined, name));
  }
}
