/**
 * ConfigMaps and Secrets a pod references, read with the node's identity (the Node authorizer
 * allows exactly those of pods bound to this node). A missing object is `undefined`; any other
 * API error propagates so the pod sync retries with backoff.
 */
import { type KubeClient, path, R, unlessNotFound } from "@kruntimes/kube";
import type { ConfigMap, Secret } from "./types.ts";

export interface ObjectSource {
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
}

export class ApiObjectSource implements ObjectSource {
  constructor(private readonly client: KubeClient) {}

  configMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    return unlessNotFound(this.client.get<ConfigMap>(path(R.configMaps, namespace, name)));
  }

  secret(namespace: string, name: string): Promise<Secret | undefined> {
    return unlessNotFound(this.client.get<Secret>(path(R.secrets, namespace, name)));
  }
}

/** ConfigMap values as bytes: `data` as UTF-8 plus `binaryData` (base64). */
export function configMapBytes(cm: ConfigMap): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) out.set(k, Buffer.from(v, "utf8"));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out.set(k, Buffer.from(v, "base64"));
  return out;
}

/** Secret values as bytes (`data` is base64 on the wire). */
export function secretBytes(s: Secret): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(s.data ?? {})) out.set(k, Buffer.from(v, "base64"));
  return out;
}
