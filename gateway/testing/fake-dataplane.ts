/**
 * A stand-in runtimed dataplane port for the gateway's in-process tests and benchmark: the real
 * FunctionDataplaneService contract (Connect over Bun.serve, fenced) with a trivial handler — it
 * echoes the body, or acts on it: `raise` → a HandlerError, `sleep:<ms>` → waits, `busy` → BUSY,
 * `big:<n>` → an n-byte body. The cluster tests run the real runtimed.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import {
  FunctionDataplaneService,
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import {
  InvokeFailure_Reason,
  InvokeFailureSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

export interface FakeDataplane {
  port: number;
  /** Authorization headers seen, most recent last. */
  auth: string[];
  calls: number;
  stop(): void;
}

export function startFakeDataplane(o: {
  podUID: string;
  serves: Map<string, number>;
  recordAuth?: boolean;
}): FakeDataplane {
  const state = { auth: [] as string[], calls: 0 };
  const router = createConnectRouter();
  router.service(FunctionDataplaneService, {
    async invoke(req, ctx) {
      state.calls++;
      if (o.recordAuth) state.auth.push(ctx.requestHeader.get("authorization") ?? "");
      const fence = req.fence;
      const attempt = o.serves.get(fence?.runUid ?? "");
      if (fence?.podUid !== o.podUID || attempt === undefined || attempt !== fence.attempt) {
        throw new ConnectError("stale route", Code.FailedPrecondition, undefined, [
          {
            desc: RouteFailureSchema,
            value: create(RouteFailureSchema, { reason: RouteFailure_Reason.WRONG_POD }),
          },
        ]);
      }
      const text = new TextDecoder().decode(req.body);
      if (text === "raise") {
        return {
          result: {
            handlerError: { type: "ValueError", message: "boom", traceback: "Traceback…", exitCode: 0 },
          },
        };
      }
      if (text === "busy") {
        throw new ConnectError("queue full", Code.ResourceExhausted, undefined, [
          {
            desc: InvokeFailureSchema,
            value: create(InvokeFailureSchema, { reason: InvokeFailure_Reason.BUSY, retryAfterMs: 1500 }),
          },
        ]);
      }
      if (text.startsWith("sleep:")) await Bun.sleep(Number(text.slice(6)));
      const body = text.startsWith("big:") ? new Uint8Array(Number(text.slice(4))) : req.body;
      return {
        result: {
          status: text === "teapot" ? 418 : 200,
          contentType: req.contentType || "application/octet-stream",
          body,
          headers: { "x-echo-header": req.headers["x-test"] ?? "" },
          durationMicros: 7n,
        },
      };
    },
  });
  const handlers = new Map<string, (r: Request) => Promise<Response>>();
  for (const h of router.handlers) handlers.set(h.requestPath, createFetchHandler(h));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(request) {
      const url = new URL(request.url);
      const h = handlers.get(url.pathname);
      return h ? h(request) : new Response("no", { status: 404 });
    },
  });
  return {
    port: server.port as number,
    get auth() {
      return state.auth;
    },
    get calls() {
      return state.calls;
    },
    stop: () => server.stop(true),
  };
}
