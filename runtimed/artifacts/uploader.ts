/**
 * Stores one attempt's collected artifacts and returns their references: each is streamed once
 * through sha256 and a byte counter into the store (files as-is, directories as a deterministic
 * tar.gz), so the digest is of exactly the bytes stored. A transient store failure (network, 5xx,
 * throttling) re-sends that artifact from the start with backoff until `retryBudgetMs` is spent;
 * a permanent one (credentials, missing bucket) fails at once. Runs upload independently: one
 * slow upload never holds back another Run.
 */
import { createHash } from "node:crypto";
import type { ArtifactRef } from "@kruntimes/api";
import { ArtifactRejection, type Planned } from "./collect.ts";
import { type ArtifactStoreDriver, artifactKey, isTransient } from "./store.ts";
import { fileStream, tarGzStream } from "./tar-gz.ts";

export interface UploadOptions {
  namespace: string;
  runUID: string;
  attempt: number;
  maxArtifactBytes: number;
  retryBudgetMs: number;
  /** First backoff; doubles up to 10 s. */
  retryDelayMs: number;
  signal?: AbortSignal;
  /** Told about each failed try that will be retried. */
  onRetry?: (name: string, err: unknown, delayMs: number) => void;
}

export class UploadFailed extends Error {
  override name = "UploadFailed";
}

async function* measured(
  src: AsyncIterable<Uint8Array>,
  m: { size: number; hash: ReturnType<typeof createHash> },
  max: number,
  name: string,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of src) {
    m.size += chunk.byteLength;
    if (m.size > max)
      throw new ArtifactRejection(
        `artifacts rejected: ${name}.tar.gz is over the store's maxArtifactBytes ${max}`,
      );
    m.hash.update(chunk);
    yield chunk;
  }
}

function contentTypeOf(p: Planned): string {
  if (p.kind === "dir") return "application/gzip";
  const t = Bun.file(p.path).type;
  return t && t !== "application/octet-stream" ? (t.split(";")[0] ?? t) : "application/octet-stream";
}

async function uploadOne(store: ArtifactStoreDriver, p: Planned, o: UploadOptions): Promise<ArtifactRef> {
  const file = p.kind === "dir" ? `${p.name}.tar.gz` : p.name;
  const key = artifactKey(o.namespace, o.runUID, o.attempt, file);
  const contentType = contentTypeOf(p);
  const deadline = Date.now() + o.retryBudgetMs;
  let delay = o.retryDelayMs;
  for (;;) {
    const m = { size: 0, hash: createHash("sha256") };
    const src = p.kind === "dir" ? tarGzStream(p.path, p.entries) : fileStream(p.path, p.size, p.name);
    try {
      await store.put(key, measured(src, m, o.maxArtifactBytes, p.name), contentType);
      return {
        name: p.name,
        driver: store.driver,
        type: p.kind === "dir" ? "archive" : "file",
        location: store.location(key),
        attempt: o.attempt,
        size: m.size,
        digest: `sha256:${m.hash.digest("hex")}`,
        contentType,
        created: new Date().toISOString(),
      };
    } catch (e) {
      if (e instanceof ArtifactRejection) throw e;
      const msg = e instanceof Error ? e.message : String(e);
      if (!isTransient(e)) throw new UploadFailed(`storing ${p.name} failed: ${msg}`);
      if (o.signal?.aborted) throw new UploadFailed(`storing ${p.name} was abandoned: ${msg}`);
      if (Date.now() + delay > deadline)
        throw new UploadFailed(
          `storing ${p.name} failed after retrying for ${Math.round(o.retryBudgetMs / 1000)}s: ${msg}`,
        );
      o.onRetry?.(p.name, e, delay);
      await Bun.sleep(delay);
      delay = Math.min(delay * 2, 10_000);
    }
  }
}

/** In name order, one at a time (a pod's uplink is shared by its Runs; parallel parts come from multipart). */
export async function uploadAll(
  store: ArtifactStoreDriver,
  planned: readonly Planned[],
  o: UploadOptions,
): Promise<ArtifactRef[]> {
  const refs: ArtifactRef[] = [];
  for (const p of planned) refs.push(await uploadOne(store, p, o));
  return refs;
}
