/**
 * What a Runtime's `spec.artifactStore` adds to its pods — to the runtimed sidecar only, never to
 * the runtime container that runs user code: the store configuration (`KRT_ARTIFACT_STORE`), the
 * S3 credentials from the named Secret as env (`secretKeyRef`, so the controller never reads the
 * Secret), or the filesystem store's claim mounted at `ARTIFACT_FS_ROOT`. Shared by the
 * maintainer's Deployment, which needs the same access.
 */
import type { ArtifactStore } from "@kruntimes/api";
import type { Container, EnvVar, Volume, VolumeMount } from "../runtime/render/pod-types.ts";

export const ARTIFACT_FS_ROOT = "/var/run/kruntimes/artifact-store";
export const ARTIFACT_VOLUME = "krt-artifact-store";

export interface StoreWiring {
  env: EnvVar[];
  volumes: Volume[];
  mounts: VolumeMount[];
}

export function storeWiring(store: ArtifactStore): StoreWiring {
  const env: EnvVar[] = [
    { name: "KRT_ARTIFACT_STORE", value: JSON.stringify(store) },
    { name: "KRT_ARTIFACT_FS_ROOT", value: ARTIFACT_FS_ROOT },
  ];
  const secret = store.s3?.credentialsSecretRef?.name;
  if (secret)
    for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
      env.push({ name: key, valueFrom: { secretKeyRef: { name: secret, key } } });
  if (!store.filesystem) return { env, volumes: [], mounts: [] };
  return {
    env,
    volumes: [{ name: ARTIFACT_VOLUME, persistentVolumeClaim: { claimName: store.filesystem.claimName } }],
    mounts: [{ name: ARTIFACT_VOLUME, mountPath: ARTIFACT_FS_ROOT }],
  };
}

/** runtimed with the store wired in; `volumes` gets the claim when there is one. */
export function withArtifactStore(
  store: ArtifactStore | undefined,
  c: Container,
  volumes: Volume[],
): Container {
  if (!store) return c;
  const w = storeWiring(store);
  volumes.push(...w.volumes);
  return { ...c, env: [...(c.env ?? []), ...w.env], volumeMounts: [...(c.volumeMounts ?? []), ...w.mounts] };
}
