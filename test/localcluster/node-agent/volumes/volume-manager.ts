/**
 * Materialises a pod's volumes as directories under the pod's state dir: emptyDir (private dir),
 * hostPath (the host path itself), configMap/secret/downwardAPI files, and projected volumes,
 * whose service-account token comes from the TokenRequest API bound to the pod and is refreshed
 * before it expires. Containers see them through bind mounts in their own mount namespace.
 */
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type KubeClient, path as kpath, R } from "@kruntimes/kube";
import { configMapBytes, type ObjectSource, secretBytes } from "../api/object-source.ts";
import type { KeyToPath, Pod, Volume, VolumeProjection } from "../api/types.ts";
import { ContainerConfigError } from "../env/container-env.ts";
import { fieldRefValue, type PodFacts, resourceFieldValue } from "../env/field-ref.ts";

export interface VolumeDir {
  dir: string;
  readOnly: boolean;
}

interface TokenState {
  token: string;
  refreshAtMs: number;
}

export class VolumeManager {
  private readonly tokens = new Map<string, TokenState>();

  constructor(
    private readonly client: KubeClient,
    private readonly objects: ObjectSource,
  ) {}

  /** (Re)writes every volume of the pod; returns name → directory. Idempotent: run on every sync. */
  async prepare(pod: Pod, podDir: string, facts: PodFacts): Promise<Map<string, VolumeDir>> {
    const out = new Map<string, VolumeDir>();
    for (const v of pod.spec.volumes ?? []) {
      const dir = join(podDir, "volumes", v.name);
      if (v.hostPath) {
        if (!existsSync(v.hostPath.path) && v.hostPath.type?.startsWith("DirectoryOrCreate"))
          mkdirSync(v.hostPath.path, { recursive: true });
        out.set(v.name, { dir: v.hostPath.path, readOnly: false });
        continue;
      }
      mkdirSync(dir, { recursive: true });
      if (v.emptyDir) out.set(v.name, { dir, readOnly: false });
      else {
        await this.writeFiles(pod, v, dir, facts);
        out.set(v.name, { dir, readOnly: true });
      }
    }
    return out;
  }

  forget(podUid: string): void {
    for (const k of this.tokens.keys()) if (k.startsWith(`${podUid}/`)) this.tokens.delete(k);
  }

  private async writeFiles(pod: Pod, v: Volume, dir: string, facts: PodFacts): Promise<void> {
    const ns = pod.metadata.namespace ?? "default";
    const mode =
      v.configMap?.defaultMode ??
      v.secret?.defaultMode ??
      v.downwardAPI?.defaultMode ??
      v.projected?.defaultMode ??
      0o644;
    const sources: VolumeProjection[] = v.projected?.sources ?? [];
    if (v.configMap) sources.push({ configMap: v.configMap });
    if (v.secret)
      sources.push({
        secret: { name: v.secret.secretName, items: v.secret.items, optional: v.secret.optional },
      });
    if (v.downwardAPI) sources.push({ downwardAPI: v.downwardAPI });
    const files = new Map<string, { data: Buffer; mode: number }>();
    for (const s of sources) {
      if (s.configMap || s.secret) {
        const ref = (s.configMap ?? s.secret)!;
        const kind = s.configMap ? "configmap" : "secret";
        const obj = s.configMap
          ? await this.objects.configMap(ns, ref.name)
          : await this.objects.secret(ns, ref.name);
        if (!obj) {
          if (ref.optional) continue;
          throw new ContainerConfigError(`${kind} "${ref.name}" not found (volume ${v.name})`);
        }
        const data = s.configMap ? configMapBytes(obj) : secretBytes(obj);
        addItems(files, data, ref.items, mode, `${kind} ${ref.name}`);
      }
      for (const item of s.downwardAPI?.items ?? []) {
        const value = item.fieldRef
          ? fieldRefValue(pod, facts, item.fieldRef)
          : item.resourceFieldRef
            ? resourceFieldValue(pod, facts, item.resourceFieldRef, pod.spec.containers[0]!)
            : "";
        files.set(item.path, { data: Buffer.from(value), mode: item.mode ?? mode });
      }
      if (s.serviceAccountToken) {
        const token = await this.token(pod, s.serviceAccountToken, v.name);
        files.set(s.serviceAccountToken.path, { data: Buffer.from(token), mode: 0o600 });
      }
    }
    for (const [rel, f] of files) atomicWrite(join(dir, rel), f.data, f.mode);
  }

  private async token(
    pod: Pod,
    t: NonNullable<VolumeProjection["serviceAccountToken"]>,
    volume: string,
  ): Promise<string> {
    const key = `${pod.metadata.uid}/${volume}/${t.path}`;
    const cached = this.tokens.get(key);
    if (cached && Date.now() < cached.refreshAtMs) return cached.token;
    const sa = pod.spec.serviceAccountName ?? "default";
    const expirationSeconds = t.expirationSeconds ?? 3607;
    const res = await this.client.create<{ status: { token: string; expirationTimestamp: string } }>(
      kpath(R.serviceAccounts, pod.metadata.namespace, sa, "token"),
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          audiences: t.audience ? [t.audience] : [],
          expirationSeconds,
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, uid: pod.metadata.uid },
        },
      },
    );
    const ttlMs = new Date(res.status.expirationTimestamp).getTime() - Date.now();
    // kubelet refreshes at 80% of the lifetime.
    this.tokens.set(key, { token: res.status.token, refreshAtMs: Date.now() + ttlMs * 0.8 });
    return res.status.token;
  }
}

function addItems(
  files: Map<string, { data: Buffer; mode: number }>,
  data: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  mode: number,
  what: string,
): void {
  if (!items?.length) {
    for (const [k, v] of data) files.set(k, { data: v, mode });
    return;
  }
  for (const it of items) {
    const v = data.get(it.key);
    if (!v) throw new ContainerConfigError(`${what} has no key "${it.key}"`);
    files.set(it.path, { data: v, mode: it.mode ?? mode });
  }
}

function atomicWrite(file: string, data: Buffer, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.krt-tmp`;
  writeFileSync(tmp, data);
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}
