/**
 * The dashboard's HTTP surface (Elysia on Bun.serve). Every method but GET and HEAD is answered
 * 405 before routing — except `POST …/invoke`, which calls a function through the gateway (no
 * Kubernetes write; the gateway authorizes it). Behind that, every Kubernetes request goes through
 * the caller's `ReadOnlyKubeClient`, which refuses any write itself.
 */
import { Elysia } from "elysia";
import type { Logger } from "pino";
import { artifactRoute } from "./artifact-route.ts";
import { type Assets, serveAsset } from "./assets.ts";
import type { Callers } from "./callers.ts";
import { DashboardError } from "./errors.ts";
import { invokeRoute } from "./invoke-route.ts";
import { logsRoute } from "./logs-route.ts";
import { codeLabel, type Metrics, methodLabel } from "./metrics.ts";
import { namespacesWithRuns } from "./namespaces-route.ts";
import { sessionInfo } from "./session-route.ts";
import { watchRoute } from "./watch-route.ts";

export interface AppDeps {
  callers: Callers;
  assets: Assets;
  metrics: Metrics;
  log: Logger;
  gatewayNamespace: string;
  /** Local mode: the Host headers accepted (DNS rebinding cannot reach the kubeconfig's rights). */
  allowedHosts?: ReadonlySet<string>;
}

export const INVOKE_ROUTE = "/api/namespaces/:ns/runs/:name/invoke";
const INVOKE_PATTERN = /^\/api\/namespaces\/[^/]+\/runs\/[^/]+\/invoke$/;
/** A header a cross-site form cannot send, required on the one POST route. */
export const REQUESTED_BY = "x-requested-by";

/** Whether a request may pass the write guard. */
export function allowedMethod(method: string, pathname: string): boolean {
  const m = method.toUpperCase();
  return m === "GET" || m === "HEAD" || (m === "POST" && INVOKE_PATTERN.test(pathname));
}

/**
 * Runs a route and answers its failure as a DashboardError. Errors are caught here rather than
 * in onError: Elysia reads a thrown error's `status` property as the HTTP status, and
 * KubeError's `status` is the apiserver's Status object.
 */
async function answer(route: () => Promise<Response> | Response): Promise<Response> {
  try {
    return await route();
  } catch (e) {
    return DashboardError.from(e).toResponse();
  }
}

const json = (v: unknown) =>
  new Response(JSON.stringify(v), { headers: { "content-type": "application/json" } });

export function createApp(d: AppDeps) {
  const started = new WeakMap<Request, number>();
  return new Elysia()
    .onRequest(({ request }) => {
      started.set(request, performance.now());
      const url = new URL(request.url);
      if (d.allowedHosts && !d.allowedHosts.has(request.headers.get("host") ?? ""))
        return new DashboardError(
          403,
          "Forbidden",
          "local mode answers only to 127.0.0.1 and localhost",
        ).toResponse();
      if (!allowedMethod(request.method, url.pathname)) {
        d.metrics.refusedWrites.inc();
        return new DashboardError(
          405,
          "MethodNotAllowed",
          `the dashboard is read-only: ${request.method} is not accepted`,
          "use kubectl or krt to change objects",
        ).toResponse();
      }
      if (request.method === "POST" && request.headers.get(REQUESTED_BY) !== "kruntimes-dashboard")
        return new DashboardError(
          400,
          "BadRequest",
          `POST needs the header ${REQUESTED_BY}: kruntimes-dashboard`,
        ).toResponse();
    })
    .onAfterResponse(({ request, route, set }) => {
      const t = started.get(request);
      const status = typeof set.status === "number" ? set.status : 200;
      const r = route || "unmatched";
      d.metrics.requests.inc({ route: r, method: methodLabel(request.method), code: codeLabel(status) });
      if (t !== undefined) d.metrics.duration.observe({ route: r }, (performance.now() - t) / 1000);
    })
    .get("/healthz", () => "ok")
    .get(
      "/metrics",
      async () =>
        new Response(await d.metrics.registry.metrics(), {
          headers: { "content-type": d.metrics.registry.contentType },
        }),
    )
    .get("/api/session", ({ request }) =>
      answer(async () => json(await sessionInfo(d.callers.of(request), d.callers.mode, d.gatewayNamespace))),
    )
    .get("/api/namespaces", ({ request }) =>
      answer(async () => json(await namespacesWithRuns(d.callers.of(request).client))),
    )
    .get("/api/namespaces/:ns/watch/:kind", ({ request, params }) =>
      answer(() => watchRoute(d.callers, d.metrics, request, params.ns, params.kind)),
    )
    .get("/api/namespaces/:ns/runs/:name/logs", ({ request, params }) =>
      answer(() => logsRoute(d.callers, d.metrics, request, params.ns, params.name)),
    )
    .get("/api/namespaces/:ns/runs/:name/artifacts/*", ({ request, params }) =>
      answer(() =>
        artifactRoute(d.callers.of(request), params.ns, params.name, decodeURIComponent(params["*"])),
      ),
    )
    .post(
      INVOKE_ROUTE,
      ({ request, params }) =>
        answer(() => invokeRoute(d.callers.of(request), d.gatewayNamespace, request, params.ns, params.name)),
      { parse: "none" },
    )
    .get("/api/*", () => new DashboardError(404, "NotFound", "no such API route").toResponse())
    .get("/*", ({ request }) => serveAsset(d.assets, new URL(request.url).pathname))
    .onError(({ code, error, request }) => {
      if (code === "NOT_FOUND") return new DashboardError(404, "NotFound", "no such route").toResponse();
      const e = DashboardError.from(error);
      if (e.status >= 500)
        d.log.warn({ path: new URL(request.url).pathname, err: e.message }, "request failed");
      return e.toResponse();
    });
}
