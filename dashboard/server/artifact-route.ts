/**
 * `GET /api/namespaces/:ns/runs/:name/artifacts/:artifact`: one artifact's bytes, fetched from
 * the store's maintainer with the caller's own token (the maintainer allows it to identities
 * that may `get` the Run — docs/concepts/artifacts.md) and streamed back as a download.
 * The maintainer is its ready pod's address when the caller may list pods (the local cluster
 * has no Service proxy), else the Service's in-cluster DNS name.
 */
import { ARTIFACTS_FINALIZER, Labels, maintainerName, type Run, RunResource } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import type { Caller } from "./callers.ts";
import { DashboardError } from "./errors.ts";
import type { KubePod } from "./summaries.ts";

/** The maintainer's download port (controller/artifacts/maintainer-objects.ts). */
const MAINTAINER_PORT = 8090;
const MAINTAINER_COMPONENT = "artifact-maintainer";

export async function artifactRoute(
  caller: Caller,
  namespace: string,
  name: string,
  artifact: string,
): Promise<Response> {
  let run: Run;
  try {
    run = await caller.client.get<Run>(path(RunResource, namespace, name));
  } catch (e) {
    throw DashboardError.from(e, `get runs in namespace ${namespace}`);
  }
  const ref = run.status?.artifactRefs?.find((r) => r.name === artifact);
  const storeId = run.metadata.labels?.[Labels.artifactStore];
  if (!ref)
    throw new DashboardError(404, "NotFound", `run ${name} has no artifact ${JSON.stringify(artifact)}`);
  if (!storeId || !run.metadata.finalizers?.includes(ARTIFACTS_FINALIZER))
    throw new DashboardError(404, "NotFound", `run ${name} names no artifact store to download from`);
  if (!caller.token)
    throw new DashboardError(
      400,
      "BadRequest",
      "the artifact maintainer checks a bearer token, and these credentials have none",
      "sign in with a token, or run `krt dashboard` with a kubeconfig user that has one",
    );
  const base = await maintainerBase(caller, namespace, storeId);
  const url = `${base}/v1/runs/${encodeURIComponent(name)}/artifacts/${encodeURIComponent(ref.name)}`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${caller.token}` } });
  } catch (e) {
    throw new DashboardError(
      503,
      "Unavailable",
      `cannot reach the artifact maintainer at ${base}: ${e instanceof Error ? e.message : e}`,
    );
  }
  if (!res.ok) {
    const text = await res.text();
    throw new DashboardError(
      res.status === 401 ? 403 : res.status,
      res.status === 403 || res.status === 401 ? "Forbidden" : "Unavailable",
      `the artifact maintainer refused the download (${res.status}): ${text.slice(0, 300)}`,
    );
  }
  const file = ref.type === "archive" ? `${ref.name}.tar.gz` : ref.name;
  return new Response(res.body, {
    headers: {
      "content-type": ref.contentType ?? res.headers.get("content-type") ?? "application/octet-stream",
      "content-disposition": `attachment; filename="${file.replace(/["/\\]/g, "_")}"`,
      ...(res.headers.get("content-length")
        ? { "content-length": res.headers.get("content-length") as string }
        : {}),
    },
  });
}

async function maintainerBase(caller: Caller, namespace: string, storeId: string): Promise<string> {
  try {
    const pods = await caller.client.list<KubePod>(path(R.pods, namespace), {
      labelSelector: `${Labels.artifactStore}=${storeId},app.kubernetes.io/component=${MAINTAINER_COMPONENT}`,
    });
    const ready = pods.items.find(
      (p) => p.status?.podIP && p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    );
    if (ready?.status?.podIP) return `http://${ready.status.podIP}:${MAINTAINER_PORT}`;
  } catch {
    // May not list pods: the Service name works from inside the cluster.
  }
  return `http://${maintainerName(storeId)}.${namespace}.svc:${MAINTAINER_PORT}`;
}
