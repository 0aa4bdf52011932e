/**
 * The artifact maintainer's options, parsed once from the environment its Deployment sets (the
 * controller renders it, see controller/artifacts/maintainer-objects.ts): which store (snapshot
 * and id), its access (claim mount or S3 credentials), its namespace and where it listens.
 */
import { type ArtifactStore, parseSnapshot } from "@kruntimes/api";

export interface MaintainerOptions {
  namespace: string;
  storeId: string;
  store: ArtifactStore;
  fsRoot: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  host: string;
  port: number;
  /** Re-check every Run this often, whatever the watch says (deletions that failed are retried). */
  resyncMs: number;
  kubeconfig?: string;
  logLevel: string;
}

export class MaintainerOptionsError extends Error {
  override name = "MaintainerOptionsError";
}

export function parseMaintainerOptions(env: Record<string, string | undefined>): MaintainerOptions {
  const need = (k: string): string => {
    const v = env[k];
    if (!v) throw new MaintainerOptionsError(`$${k} is required: the maintainer's Deployment sets it`);
    return v;
  };
  let store: ArtifactStore;
  try {
    store = parseSnapshot(need("KRT_ARTIFACT_STORE"));
  } catch (e) {
    throw new MaintainerOptionsError(`$KRT_ARTIFACT_STORE: ${(e as Error).message}`);
  }
  const port = Number(env.KRT_PORT ?? "8090");
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new MaintainerOptionsError(`$KRT_PORT must be a port number, got ${JSON.stringify(env.KRT_PORT)}`);
  const id = env.AWS_ACCESS_KEY_ID;
  const secret = env.AWS_SECRET_ACCESS_KEY;
  return {
    namespace: need("POD_NAMESPACE"),
    storeId: need("KRT_ARTIFACT_STORE_ID"),
    store,
    fsRoot: env.KRT_ARTIFACT_FS_ROOT ?? "/var/run/kruntimes/artifact-store",
    ...(id && secret ? { credentials: { accessKeyId: id, secretAccessKey: secret } } : {}),
    host: env.POD_IP ?? "127.0.0.1",
    port,
    resyncMs: Number(env.KRT_RESYNC_MS ?? "30000"),
    ...(env.KUBECONFIG ? { kubeconfig: env.KUBECONFIG } : {}),
    logLevel: env.KRT_LOG_LEVEL ?? "info",
  };
}
