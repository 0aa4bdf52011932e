/**
 * `kruntimes.gateway.v1.FunctionService` as Connect routes: translate the RPC to an InvokeCall and
 * the outcome (or GatewayError, with its details and Retry-After) back. The same routes serve
 * Connect, gRPC and gRPC-Web on the Bun listener and on the node:http2 listeners.
 */
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { GatewayError } from "../errors.ts";
import type { Invoker } from "../invoke/invoker.ts";
import type { Protocol } from "../metrics.ts";

/** Which protocol a call arrived with, from its content type. */
export function protocolOf(contentType: string | null): Protocol {
  if (contentType?.startsWith("application/grpc-web")) return "grpcweb";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

export function functionServiceRoutes(invoker: Invoker): (router: ConnectRouter) => void {
  return (router) => {
    router.service(FunctionService, {
      async invoke(req, ctx: HandlerContext) {
        try {
          const out = await invoker.invoke({
            namespace: req.namespace,
            run: req.run,
            body: req.body,
            contentType: req.contentType,
            headers: lowerCased(req.headers),
            authorization: ctx.requestHeader.get("authorization"),
            requestedTimeoutMs: ctx.timeoutMs(),
            protocol: protocolOf(ctx.requestHeader.get("content-type")),
            signal: ctx.signal,
          });
          return {
            status: out.status,
            contentType: out.contentType,
            body: out.body,
            headers: out.headers,
            invocationId: out.invocationId,
            durationMicros: out.durationMicros,
          };
        } catch (e) {
          throw GatewayError.from(e).toConnectError();
        }
      },
    });
  };
}

function lowerCased(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
