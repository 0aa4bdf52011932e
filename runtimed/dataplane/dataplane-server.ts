/**
 * runtimed's dataplane port: `FunctionDataplaneService` (Connect JSON/binary and gRPC-Web over
 * HTTP/1.1) on `$POD_IP:$KRT_DATAPLANE_PORT`, served by Bun.serve + createConnectRouter +
 * createFetchHandler, with a fast path for Connect binary unary (fast-path.ts). Each call:
 * authenticate (cached TokenReview), check the route fence, then forward to the local Runtime
 * Server's Invoke over the kept-alive Unix socket connection; the server's own errors (with their
 * InvokeFailure detail) pass through unchanged. Nothing here
 * talks to the apiserver per call except an uncached TokenReview.
 */
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import { FunctionLimits } from "@kruntimes/api";
import { FunctionDataplaneService } from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import type { FunctionTable } from "../functions/function-table.ts";
import type { Logger } from "../logger.ts";
import type { InvocationResult, Metrics } from "../metrics.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import { type SessionServiceDeps, sessionServiceImpl } from "../sessions/session-service.ts";
import { fastInvoke, INVOKE_PATH, takesFastPath } from "./fast-path.ts";
import { checkFence } from "./fence.ts";
import { resultOfError, resultOfResponse } from "./invoke-result.ts";
import { serverUnreachable } from "./server-unreachable.ts";
import type { DataplaneAuth } from "./token-auth.ts";

export interface DataplaneDeps {
  host: string;
  port: number;
  /** The Runtime Server's socket (the fast path's raw forward). */
  socketPath: string;
  podUID: string;
  table: FunctionTable;
  functions: RuntimeServerClients["functions"];
  auth: DataplaneAuth;
  metrics: Metrics;
  log: Logger;
  draining(): boolean;
  /** Sessions served here: kruntimes.gateway.v1.SessionService on the same port. */
  sessions?: Pick<SessionServiceDeps, "table" | "sessions" | "metrics">;
}

/** The server's own errors as they are; transport failures classified (server-unreachable.ts). */
export function fromServer(e: unknown): ConnectError {
  const err = ConnectError.from(e);
  if (
    err.details.length === 0 &&
    (err.code === Code.Unknown || err.code === Code.Internal || err.code === Code.Unavailable) &&
    !err.metadata.has("content-type")
  )
    return serverUnreachable(new Error(err.rawMessage));
  return err;
}

export type DataplaneHandler = (request: Request) => Promise<Response>;

/**
 * The largest request body the port reads: a function's largest request (FunctionLimits), as
 * Connect JSON (base64 is 4/3) with room for the other fields. The router reads the body before
 * the handler authenticates, so without a bound an unauthenticated caller could make runtimed
 * buffer Bun's default (128 MiB) per request.
 */
export const DATAPLANE_MAX_BODY_BYTES = Math.ceil(FunctionLimits.maxMaxRequestBytes * 1.4) + 64 * 1024;

export function dataplaneHandler(d: Omit<DataplaneDeps, "host" | "port">): DataplaneHandler {
  const router = createConnectRouter({ readMaxBytes: DATAPLANE_MAX_BODY_BYTES });
  router.service(FunctionDataplaneService, {
    async invoke(req, ctx) {
      const t0 = performance.now();
      let result: InvocationResult = "error";
      let forwarded = false;
      try {
        await d.auth.check(ctx.requestHeader.get("authorization"));
        const served = checkFence(req.fence, { podUID: d.podUID, table: d.table, draining: d.draining() });
        if (served instanceof ConnectError) throw served;
        forwarded = true;
        d.metrics.invocationsInFlight.inc();
        let res: Awaited<ReturnType<typeof d.functions.invoke>>;
        try {
          res = await d.functions.invoke(
            {
              runUid: req.fence?.runUid ?? "",
              attempt: served.attempt,
              invocationId: req.invocationId,
              body: req.body,
              contentType: req.contentType,
              headers: req.headers,
              timeoutMs: req.timeoutMs || Math.max(0, Math.floor(ctx.timeoutMs() ?? 0)),
            },
            { signal: ctx.signal },
          );
        } catch (e) {
          throw fromServer(e);
        }
        result = resultOfResponse(res);
        return { result: res };
      } catch (e) {
        const err = ConnectError.from(e);
        result = resultOfError(err);
        throw err;
      } finally {
        if (forwarded) {
          d.metrics.invocationsInFlight.dec();
          d.metrics.invocationDuration.observe((performance.now() - t0) / 1000);
        }
        d.metrics.invocations.inc({ result });
      }
    },
  });
  if (d.sessions)
    router.service(
      SessionService,
      sessionServiceImpl({ ...d.sessions, podUID: d.podUID, auth: d.auth, draining: d.draining }),
    );
  const handlers = new Map<string, DataplaneHandler>();
  for (const h of router.handlers) handlers.set(h.requestPath, createFetchHandler(h));
  return async (request) => {
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    if (path === INVOKE_PATH && takesFastPath(request)) return fastInvoke(request, d);
    const handler = handlers.get(path);
    if (!handler) return new Response(`no RPC at ${path}\n`, { status: 404 });
    return handler(request);
  };
}

export function serveDataplane(d: DataplaneDeps) {
  const handle = dataplaneHandler(d);
  const server = Bun.serve({
    hostname: d.host,
    port: d.port,
    // Invocations may run up to 15 minutes without a byte on the wire.
    idleTimeout: 0,
    maxRequestBodySize: DATAPLANE_MAX_BODY_BYTES,
    fetch: (request) => handle(request),
  });
  d.log.info({ host: d.host, port: server.port }, "dataplane listening");
  return server;
}
