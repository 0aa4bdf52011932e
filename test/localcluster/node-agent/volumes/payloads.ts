/**
 * The files of configMap, secret, downwardAPI and projected volumes, computed as kubelet does:
 * all keys (or the listed `items`), `defaultMode`/per-item `mode` (default 0644), `optional`
 * sources that may be missing, and items naming missing keys as errors unless optional.
 */
import { configMapBytes, type ObjectSource, secretBytes } from "../api/object-source.ts";
import type { DownwardAPIVolumeFile, KeyToPath, Pod, Volume, VolumeProjection } from "../api/types.ts";
import { fieldRefValue, type PodFacts, resourceFieldValue } from "../env/field-ref.ts";
import type { Payload } from "./atomic-writer.ts";

export const DEFAULT_MODE = 0o644;

export class VolumeError extends Error {
  override name = "VolumeError";
}

/** Issues service-account tokens for the pod (TokenRequest); see service-account-tokens.ts. */
export interface TokenSource {
  token(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string>;
}

function keyedPayload(
  out: Payload,
  kind: string,
  name: string,
  data: Map<string, Buffer> | undefined,
  items: KeyToPath[] | undefined,
  optional: boolean | undefined,
  mode: number,
): void {
  if (!data) {
    if (optional) return;
    throw new VolumeError(`${kind} "${name}" not found`);
  }
  if (!items?.length) {
    for (const [k, v] of data) out.set(k, { data: v, mode });
    return;
  }
  for (const it of items) {
    const v = data.get(it.key);
    if (v === undefined) {
      if (optional) continue;
      throw new VolumeError(`${kind} "${name}" references non-existent key: ${it.key}`);
    }
    out.set(it.path, { data: v, mode: it.mode ?? mode });
  }
}

function downwardPayload(
  out: Payload,
  pod: Pod,
  facts: PodFacts,
  items: DownwardAPIVolumeFile[],
  mode: number,
): void {
  for (const it of items) {
    let value = "";
    if (it.fieldRef) value = fieldRefValue(pod, facts, it.fieldRef);
    else if (it.resourceFieldRef) value = resourceFieldValue(pod, facts, it.resourceFieldRef);
    out.set(it.path, { data: Buffer.from(value), mode: it.mode ?? mode });
  }
}

export interface PayloadContext {
  pod: Pod;
  facts: PodFacts;
  objects: ObjectSource;
  tokens: TokenSource;
}

async function projectionPayload(
  out: Payload,
  ctx: PayloadContext,
  src: VolumeProjection,
  mode: number,
): Promise<void> {
  const ns = ctx.pod.metadata.namespace ?? "default";
  if (src.configMap) {
    const cm = await ctx.objects.configMap(ns, src.configMap.name);
    keyedPayload(
      out,
      "configmap",
      src.configMap.name,
      cm && configMapBytes(cm),
      src.configMap.items,
      src.configMap.optional,
      mode,
    );
  } else if (src.secret) {
    const s = await ctx.objects.secret(ns, src.secret.name);
    keyedPayload(
      out,
      "secret",
      src.secret.name,
      s && secretBytes(s),
      src.secret.items,
      src.secret.optional,
      mode,
    );
  } else if (src.downwardAPI) {
    downwardPayload(out, ctx.pod, ctx.facts, src.downwardAPI.items ?? [], mode);
  } else if (src.serviceAccountToken) {
    const t = src.serviceAccountToken;
    const token = await ctx.tokens.token(ctx.pod, t.audience, t.expirationSeconds ?? 3600);
    out.set(t.path, { data: Buffer.from(token), mode });
  }
}

/** The payload of one volume, or undefined for volumes that are not file projections. */
export async function volumePayload(ctx: PayloadContext, v: Volume): Promise<Payload | undefined> {
  const out: Payload = new Map();
  const ns = ctx.pod.metadata.namespace ?? "default";
  if (v.configMap) {
    const mode = v.configMap.defaultMode ?? DEFAULT_MODE;
    const cm = await ctx.objects.configMap(ns, v.configMap.name);
    keyedPayload(
      out,
      "configmap",
      v.configMap.name,
      cm && configMapBytes(cm),
      v.configMap.items,
      v.configMap.optional,
      mode,
    );
  } else if (v.secret) {
    const mode = v.secret.defaultMode ?? DEFAULT_MODE;
    const s = await ctx.objects.secret(ns, v.secret.secretName);
    keyedPayload(
      out,
      "secret",
      v.secret.secretName,
      s && secretBytes(s),
      v.secret.items,
      v.secret.optional,
      mode,
    );
  } else if (v.downwardAPI) {
    downwardPayload(
      out,
      ctx.pod,
      ctx.facts,
      v.downwardAPI.items ?? [],
      v.downwardAPI.defaultMode ?? DEFAULT_MODE,
    );
  } else if (v.projected) {
    const mode = v.projected.defaultMode ?? DEFAULT_MODE;
    for (const src of v.projected.sources ?? []) await projectionPayload(out, ctx, src, mode);
  } else {
    return undefined;
  }
  return out;
}
