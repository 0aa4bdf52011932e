/**
 * `kruntimes.gateway.v1.SessionService` as Connect routes, served with FunctionService on every
 * listener (Connect JSON/binary, gRPC, gRPC-Web): each method hands its message to the
 * SessionGateway; Exec and ReadFile stream back as runtimed produces them.
 */
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { protocolOf } from "../connect/function-service.ts";
import { toConnectError } from "./session-errors.ts";
import type { SessionCallContext, SessionGateway, StreamMethod, UnaryMethod } from "./session-gateway.ts";

function context(ctx: HandlerContext): SessionCallContext {
  return {
    authorization: ctx.requestHeader.get("authorization"),
    requestedTimeoutMs: ctx.timeoutMs(),
    protocol: protocolOf(ctx.requestHeader.get("content-type")),
    signal: ctx.signal,
  };
}

export function sessionServiceRoutes(gw: SessionGateway): (router: ConnectRouter) => void {
  const unary =
    <M extends UnaryMethod>(m: M) =>
    async (req: Parameters<SessionGateway["unary"]>[1], ctx: HandlerContext) => {
      try {
        return await gw.unary(m, req as never, context(ctx));
      } catch (e) {
        throw toConnectError(e);
      }
    };
  const stream = <M extends StreamMethod>(m: M) =>
    async function* (req: Parameters<SessionGateway["stream"]>[1], ctx: HandlerContext) {
      try {
        yield* gw.stream(m, req as never, context(ctx));
      } catch (e) {
        throw toConnectError(e);
      }
    };
  return (router) => {
    router.service(SessionService, {
      exec: stream("exec"),
      readFile: stream("readFile"),
      cancelOperation: unary("cancelOperation"),
      startProcess: unary("startProcess"),
      signalProcess: unary("signalProcess"),
      waitProcess: unary("waitProcess"),
      listProcesses: unary("listProcesses"),
      writeFile: unary("writeFile"),
      stat: unary("stat"),
      makeDir: unary("makeDir"),
      remove: unary("remove"),
      rename: unary("rename"),
      listFiles: unary("listFiles"),
    } as never);
  };
}
