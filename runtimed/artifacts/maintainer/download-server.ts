/**
 * The maintainer's download endpoint: `GET /v1/runs/<run>/artifacts/<name>` with the caller's own
 * Kubernetes bearer token. Authorization is exactly "may this caller `get` this Run": the token
 * goes to a TokenReview (who is it), then a SubjectAccessReview of `get runs/<run>` in the
 * maintainer's namespace for that user, its groups, uid and extra (what may it do). Only then is
 * the Run read (with the maintainer's own identity), the reference looked up by name and checked
 * to point into this store, and the object streamed with its size and recorded digest in headers
 * so the client can verify what it got. Store credentials never leave the maintainer.
 */
import { type ArtifactRef, GROUP, RUN_PLURAL, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { Logger } from "../../logger.ts";
import { type ArtifactStoreDriver, runPrefix } from "../store.ts";
import { codeClass, countedBody, type MaintainerMetrics } from "./maintainer-metrics.ts";

export const DIGEST_HEADER = "x-kruntimes-digest";
const ROUTE = /^\/v1\/runs\/([a-z0-9][a-z0-9.-]{0,252})\/artifacts\/([A-Za-z0-9._-]{1,253})$/;

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

function problem(status: number, message: string): Response {
  return Response.json({ error: message }, { status });
}

export interface DownloadDeps {
  client: KubeClient;
  store: ArtifactStoreDriver;
  namespace: string;
  log: Logger;
  metrics: MaintainerMetrics;
}

async function authorize(d: DownloadDeps, token: string, run: string): Promise<Response | UserInfo> {
  const tr = await d.client.request<{
    status?: { authenticated?: boolean; user?: UserInfo; error?: string };
  }>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
  });
  if (!tr.status?.authenticated || !tr.status.user) {
    d.metrics.denials.inc({ reason: "unauthenticated" });
    return problem(
      401,
      `the token was not accepted by the cluster${tr.status?.error ? `: ${tr.status.error}` : ""}`,
    );
  }
  const u = tr.status.user;
  const sar = await d.client.request<{ status?: { allowed?: boolean; reason?: string } }>(
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: u.username,
          ...(u.uid ? { uid: u.uid } : {}),
          ...(u.groups ? { groups: u.groups } : {}),
          ...(u.extra ? { extra: u.extra } : {}),
          resourceAttributes: {
            namespace: d.namespace,
            verb: "get",
            group: GROUP,
            resource: RUN_PLURAL,
            name: run,
          },
        },
      },
    },
  );
  if (!sar.status?.allowed) {
    d.metrics.denials.inc({ reason: "forbidden" });
    return problem(
      403,
      `${u.username} may not get runs/${run} in namespace ${d.namespace}, so may not read its artifacts`,
    );
  }
  return u;
}

export async function handleDownload(d: DownloadDeps, req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (url.pathname === "/healthz") return new Response("ok");
  if (url.pathname === "/metrics")
    return new Response(await d.metrics.registry.metrics(), {
      headers: { "content-type": d.metrics.registry.contentType },
    });
  const res = await download(d, req, url);
  d.metrics.downloads.inc({ code: codeClass(res.status) });
  return res;
}

async function download(d: DownloadDeps, req: Request, url: URL): Promise<Response> {
  const m = ROUTE.exec(url.pathname);
  if (!m) return problem(404, "not found; downloads are GET /v1/runs/<run>/artifacts/<name>");
  if (req.method !== "GET") return problem(405, "only GET");
  const [, runName, name] = m as unknown as [string, string, string];
  const auth = req.headers.get("authorization") ?? "";
  if (!auth.startsWith("Bearer ")) {
    d.metrics.denials.inc({ reason: "unauthenticated" });
    return problem(401, "send your Kubernetes bearer token: Authorization: Bearer <token>");
  }
  try {
    const who = await authorize(d, auth.slice(7).trim(), runName);
    if (who instanceof Response) return who;
    let run: Run;
    try {
      run = await d.client.get<Run>(path(RunResource, d.namespace, runName));
    } catch (e) {
      if (e instanceof KubeError && e.code === 404) return problem(404, `run ${runName} not found`);
      throw e;
    }
    const ref: ArtifactRef | undefined = run.status?.artifactRefs?.find((r) => r.name === name);
    if (!ref) return problem(404, `run ${runName} has no artifact ${name}`);
    const key = d.store.keyOf(ref.location);
    // Only this Run's own objects: a reference cannot be pointed at another Run's artifacts.
    if (ref.driver !== d.store.driver || !key?.startsWith(runPrefix(d.namespace, run.metadata.uid ?? "")))
      return problem(
        409,
        `artifact ${name} is not one of run ${runName}'s objects in this maintainer's store`,
      );
    const obj = await d.store.get(key);
    if (!obj)
      return problem(410, `artifact ${name} is recorded but missing from the store (${ref.location})`);
    d.log.info({ user: who.username, run: runName, artifact: name, size: obj.size }, "artifact download");
    return new Response(countedBody(obj.body, d.metrics), {
      headers: {
        "content-type": ref.contentType ?? "application/octet-stream",
        "content-length": String(obj.size),
        ...(ref.digest ? { [DIGEST_HEADER]: ref.digest } : {}),
      },
    });
  } catch (e) {
    d.log.error({ err: e instanceof Error ? e.message : String(e) }, "download failed");
    return problem(502, `the maintainer could not serve it: ${e instanceof Error ? e.message : e}`);
  }
}
