/**
 * PersistentVolumeClaims and the PersistentVolumes they are bound to, read with the node's
 * identity: the Node authorizer allows a claim only when a pod bound to this node uses it, and a
 * volume only when such a claim is bound to it — the same reads a kubelet makes. A missing object
 * is `undefined`; other API errors propagate so the pod sync retries with backoff.
 */
import { type KubeClient, path, unlessNotFound } from "@kruntimes/kube";
import type { PersistentVolume, PersistentVolumeClaim } from "./types.ts";

const PVCS = { version: "v1", plural: "persistentvolumeclaims" } as const;
const PVS = { version: "v1", plural: "persistentvolumes" } as const;

export interface ClaimSource {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  volume(name: string): Promise<PersistentVolume | undefined>;
}

export class ApiClaimSource implements ClaimSource {
  constructor(private readonly client: KubeClient) {}

  claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
    return unlessNotFound(this.client.get<PersistentVolumeClaim>(path(PVCS, namespace, name)));
  }

  volume(name: string): Promise<PersistentVolume | undefined> {
    return unlessNotFound(this.client.get<PersistentVolume>(path(PVS, undefined, name)));
  }
}
