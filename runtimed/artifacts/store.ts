/**
 * The two artifact store drivers behind one small interface, so uploading (runtimed), deleting
 * and serving downloads (the maintainer) do not care which one a Runtime uses. Keys are
 * `<namespace>/<runUID>/<attempt>/<name>`: one prefix per Run, which is what cleanup deletes.
 */
import type { ArtifactDriver } from "@kruntimes/api";

export interface StoredObject {
  body: ReadableStream<Uint8Array>;
  size: number;
}

export interface ArtifactStoreDriver {
  readonly driver: ArtifactDriver;
  /** What goes into `artifactRefs[].location`. */
  location(key: string): string;
  /** The key of a location this store wrote; undefined when it is not one of ours. */
  keyOf(location: string): string | undefined;
  put(key: string, chunks: AsyncIterable<Uint8Array>, contentType: string): Promise<void>;
  /** Undefined when the object does not exist. */
  get(key: string): Promise<StoredObject | undefined>;
  /** Deletes every object under `prefix`; returns how many there were. */
  deletePrefix(prefix: string): Promise<number>;
}

/** The prefix of one Run's artifacts (all attempts). */
export function runPrefix(namespace: string, runUID: string): string {
  return `${namespace}/${runUID}/`;
}

export function artifactKey(namespace: string, runUID: string, attempt: number, file: string): string {
  return `${runPrefix(namespace, runUID)}${attempt}/${file}`;
}

/**
 * Whether retrying can help: network failures, 5xx, throttling and timeouts. Wrong credentials,
 * a missing bucket or a refused request will fail the same way again.
 */
export function isTransient(e: unknown): boolean {
  const err = e as { code?: string; status?: number; name?: string };
  const code = String(err?.code ?? "");
  if (
    /^(AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|NoSuchBucket|InvalidBucketName|EACCES|EPERM|ENOSPC|EROFS)$/.test(
      code,
    )
  )
    return false;
  if (typeof err?.status === "number") return err.status >= 500 || err.status === 408 || err.status === 429;
  return true;
}
