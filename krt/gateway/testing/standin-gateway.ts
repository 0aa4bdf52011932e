/**
 * A stand-in for the gateway's public API, for krt's own tests: `kruntimes.gateway.v1.
 * FunctionService.Invoke` on Bun.serve over TLS (Connect protocol, the generated service), with
 * one behaviour per Run name that answers each row of the gateway's error table the way the
 * gateway does (code, detail, Retry-After). The real gateway is tested in test/e2e/gateway.test.ts
 * and krt against it in test/e2e/krt-invoke.test.ts.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import {
  Failure_Reason,
  FailureSchema,
  FunctionService,
  HandlerErrorSchema,
  InvokeResponseSchema,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";

export interface StandinGateway {
  url: string;
  port: number;
  stop(): void;
}

export interface StandinOptions {
  hostname: string;
  cert: string;
  key: string;
  /** The one bearer token accepted. */
  token: string;
}

function failure(reason: Failure_Reason, retryAfterSeconds = 0) {
  return create(FailureSchema, { reason, retryAfterSeconds });
}

export function startStandinGateway(o: StandinOptions): StandinGateway {
  const router = createConnectRouter();
  router.service(FunctionService, {
    async invoke(req, ctx) {
      if (ctx.requestHeader.get("authorization") !== `Bearer ${o.token}`)
        throw new ConnectError("no valid bearer token", Code.Unauthenticated);
      const where = `${req.namespace}/${req.run}`;
      switch (req.run) {
        case "echo":
          return create(InvokeResponseSchema, {
            status: 200,
            contentType: req.contentType,
            body: req.body,
            headers: { ...req.headers, "x-namespace": req.namespace },
            invocationId: "inv-1",
            durationMicros: 42n,
          });
        case "teapot":
          return create(InvokeResponseSchema, {
            status: 418,
            contentType: "text/plain",
            body: new TextEncoder().encode("short and stout"),
          });
        case "boom":
          throw new ConnectError("handler raised", Code.Unknown, undefined, [
            {
              desc: HandlerErrorSchema,
              value: {
                type: "ValueError",
                message: "bad input",
                traceback:
                  'Traceback (most recent call last):\n  File "handler.py", line 2\nValueError: bad input',
                invocationId: "inv-2",
              },
            },
          ]);
        case "denied":
          throw new ConnectError("may not create runs/invoke", Code.PermissionDenied);
        case "missing":
          throw new ConnectError(`run ${where} not found`, Code.NotFound);
        case "pending":
          throw new ConnectError(`run ${where} is Pending`, Code.FailedPrecondition, undefined, [
            { desc: RunNotReadySchema, value: { phase: "Pending", mode: "function" } },
          ]);
        case "task":
          throw new ConnectError(`run ${where} is a task`, Code.FailedPrecondition, undefined, [
            { desc: RunNotReadySchema, value: { phase: "Running", mode: "task" } },
          ]);
        case "huge":
          throw new ConnectError("request body too large", Code.ResourceExhausted, undefined, [
            { desc: FailureSchema, value: failure(Failure_Reason.REQUEST_TOO_LARGE) },
          ]);
        case "busy":
          throw new ConnectError("function busy", Code.ResourceExhausted, { "retry-after": "2" }, [
            { desc: FailureSchema, value: failure(Failure_Reason.FUNCTION_BUSY, 2) },
          ]);
        case "gone":
          throw new ConnectError("pod unreachable", Code.Unavailable, { "retry-after": "1" }, [
            { desc: FailureSchema, value: failure(Failure_Reason.UNREACHABLE, 1) },
          ]);
        case "slow":
          throw new ConnectError("deadline passed", Code.DeadlineExceeded, undefined, [
            { desc: FailureSchema, value: failure(Failure_Reason.DEADLINE) },
          ]);
        default:
          throw new ConnectError(`run ${where} not found`, Code.NotFound);
      }
    },
  });
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, createFetchHandler(h)]));
  const server = Bun.serve({
    hostname: o.hostname,
    port: 0,
    tls: { cert: o.cert, key: o.key },
    fetch(request) {
      const handler = handlers.get(new URL(request.url).pathname);
      return handler ? handler(request) : new Response("not found", { status: 404 });
    },
  });
  return {
    url: `https://${o.hostname}:${server.port}`,
    port: server.port as number,
    stop: () => server.stop(true),
  };
}
