/**
 * The gateway's HTTP surface on plain Bun.serve routing (no Elysia): the same routes, matched by
 * hand. Not used in production — it is the baseline the benchmark measures Elysia against
 * (bench/gateway, "elysia" vs "bun" variants), kept so that comparison can be re-run.
 */
import type { FetchHandler } from "../connect/router.ts";
import { ErrorReason, GatewayError } from "../errors.ts";
import type { Invoker } from "../invoke/invoker.ts";
import { plainInvoke } from "./invoke-route.ts";

const INVOKE = /^\/v1\/namespaces\/([^/]+)\/runs\/([^/]+)\/invoke$/;

export function bareHandler(d: {
  invoker: Invoker;
  rpc: Map<string, FetchHandler>;
  maxRequestBytes: number;
}) {
  return (request: Request): Promise<Response> | Response => {
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2)).split("?")[0] as string;
    const rpc = d.rpc.get(path);
    if (rpc && request.method === "POST") return rpc(request);
    const m = INVOKE.exec(path);
    if (m && request.method === "POST") {
      return plainInvoke(
        d.invoker,
        request,
        { namespace: m[1] as string, name: m[2] as string },
        d.maxRequestBytes,
      );
    }
    return new GatewayError(ErrorReason.NotFound, "no such route (see /openapi.json)").toResponse();
  };
}
