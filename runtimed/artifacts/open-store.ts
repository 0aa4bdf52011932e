/** The driver for a store configuration: S3 with the given credentials, or the mounted claim. */
import type { ArtifactStore } from "@kruntimes/api";
import { FilesystemStore } from "./fs-store.ts";
import { S3Store } from "./s3-store.ts";
import type { ArtifactStoreDriver } from "./store.ts";

export interface StoreAccess {
  fsRoot: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export function openStore(store: ArtifactStore, a: StoreAccess): ArtifactStoreDriver {
  if (store.s3) {
    const { bucket, prefix, region, endpoint, pathStyle } = store.s3;
    return new S3Store({
      bucket,
      ...(prefix ? { prefix } : {}),
      ...(region ? { region } : {}),
      ...(endpoint ? { endpoint } : {}),
      pathStyle: pathStyle ?? false,
      ...(a.credentials ?? {}),
    });
  }
  return new FilesystemStore(a.fsRoot);
}

/** What is snapshotted onto a Run: where its artifacts are, not the upload limits. */
export function storeLocationOnly(store: ArtifactStore): ArtifactStore {
  return store.s3
    ? { s3: store.s3 }
    : { filesystem: store.filesystem as NonNullable<ArtifactStore["filesystem"]> };
}
