/**
 * The artifact store as the rest of kruntimes sees it once a Run has stored something: a snapshot
 * of `Runtime.spec.artifactStore` (written once onto the Run, annotation `kruntimes.io/artifact-store`)
 * and the store's id — a short hash of that snapshot plus the namespace — which names the store's
 * maintainer and labels the Runs it looks after. Cleanup reads only the snapshot, never the Runtime.
 */
import { createHash } from "node:crypto";
import type { ArtifactStore } from "./runtime.ts";

export type ArtifactStoreSnapshot = ArtifactStore;

/** Keys are sorted so the same configuration always gives the same JSON (and id). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

export function snapshotJson(store: ArtifactStoreSnapshot): string {
  return canonical(store);
}

/** 12 hex digits: a label value and a DNS-label suffix. */
export function artifactStoreId(namespace: string, store: ArtifactStoreSnapshot): string {
  return createHash("sha256")
    .update(`${namespace}\n${canonical(store)}`)
    .digest("hex")
    .slice(0, 12);
}

/** The maintainer's Deployment, ServiceAccount, Role… share this name. */
export function maintainerName(storeId: string): string {
  return `krt-artifacts-${storeId}`;
}

export class SnapshotError extends Error {
  override name = "SnapshotError";
}

export function parseSnapshot(json: string | undefined): ArtifactStoreSnapshot {
  if (!json) throw new SnapshotError("the Run has no artifact store snapshot annotation");
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw new SnapshotError(`artifact store snapshot is not JSON: ${(e as Error).message}`);
  }
  const s = v as ArtifactStoreSnapshot;
  if (!s || typeof s !== "object" || Boolean(s.s3) === Boolean(s.filesystem))
    throw new SnapshotError("artifact store snapshot needs exactly one of s3 or filesystem");
  if (s.s3 && typeof s.s3.bucket !== "string")
    throw new SnapshotError("artifact store snapshot: s3.bucket missing");
  if (s.filesystem && typeof s.filesystem.claimName !== "string")
    throw new SnapshotError("artifact store snapshot: filesystem.claimName missing");
  return s;
}
