/**
 * `POST /api/namespaces/:ns/runs/:name/invoke`: the invoke box. The body goes to the gateway's
 * plain invoke route with the caller's own token — the gateway authorizes `create runs/invoke`
 * with a SubjectAccessReview; nothing is written to Kubernetes. The gateway is found the way
 * `krt invoke` finds it (krt/gateway/locate.ts: the labelled Service, its ready endpoints, the
 * chart's CA). The only route that takes a POST (see app.ts).
 */
import { discoverGateway } from "@kruntimes/krt/gateway/locate.ts";
import type { Caller } from "./callers.ts";
import { DashboardError } from "./errors.ts";

/** The gateway's answer is passed back with these headers only. */
const PASSED_HEADERS = ["content-type", "x-kruntimes-invocation-id", "retry-after"];
const MAX_BODY = 1024 * 1024;

export async function invokeRoute(
  caller: Caller,
  gatewayNamespace: string,
  request: Request,
  namespace: string,
  name: string,
): Promise<Response> {
  if (!caller.token)
    throw new DashboardError(
      400,
      "BadRequest",
      "the gateway checks a bearer token, and these credentials have none",
      "sign in with a token, or run `krt dashboard` with a kubeconfig user that has one",
    );
  const body = new Uint8Array(await request.arrayBuffer());
  if (body.byteLength > MAX_BODY)
    throw new DashboardError(
      413,
      "BadRequest",
      `the invoke box sends at most ${MAX_BODY} bytes`,
      "use `krt invoke` for larger bodies",
    );
  let gw: Awaited<ReturnType<typeof discoverGateway>>;
  try {
    gw = await discoverGateway(caller.client, gatewayNamespace);
  } catch (e) {
    throw DashboardError.from(e);
  }
  if (gw.endpoints.length === 0)
    throw new DashboardError(
      503,
      "Unavailable",
      `the gateway Service ${gatewayNamespace}/${gw.service} has no ready pod`,
    );
  const tls =
    gw.scheme === "https" ? { ...(gw.ca ? { ca: gw.ca } : {}), serverName: gw.serverName } : undefined;
  let lastError: unknown;
  for (const ep of gw.endpoints) {
    const host = ep.address.includes(":") ? `[${ep.address}]` : ep.address;
    const url = `${gw.scheme}://${host}:${ep.port}/v1/namespaces/${encodeURIComponent(namespace)}/runs/${encodeURIComponent(name)}/invoke`;
    try {
      const res = await fetch(url, {
        method: "POST",
        body,
        headers: {
          authorization: `Bearer ${caller.token}`,
          "content-type": request.headers.get("content-type") ?? "application/octet-stream",
        },
        ...(tls ? { tls } : {}),
      } as RequestInit);
      const headers: Record<string, string> = {};
      for (const h of PASSED_HEADERS) {
        const v = res.headers.get(h);
        if (v) headers[h] = v;
      }
      return new Response(res.body, { status: res.status, headers });
    } catch (e) {
      lastError = e;
    }
  }
  throw new DashboardError(
    503,
    "Unavailable",
    `cannot reach the gateway (${gw.endpoints.map((e) => `${e.address}:${e.port}`).join(", ")}): ${lastError instanceof Error ? lastError.message : lastError}`,
  );
}
