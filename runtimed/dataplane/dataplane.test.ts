import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createConnectRouter, type Interceptor } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  FunctionDataplaneService,
  InvokeResponseSchema,
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import {
  FunctionService,
  InvokeFailure_Reason,
  InvokeFailureSchema,
  InvokeResponseSchema as RuntimeInvokeResponseSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import pino from "pino";
import { FunctionTable } from "../functions/function-table.ts";
import { createMetrics } from "../metrics.ts";
import { runtimeServerClients } from "../runtime-server/client.ts";
import { dataplaneClient } from "./dataplane-client.ts";
import { serveDataplane } from "./dataplane-server.ts";
import { hasHandlerError, wrapResult } from "./fast-path.ts";
import { checkFence } from "./fence.ts";
import { DataplaneAuth, type ReviewResult } from "./token-auth.ts";

const GATEWAY = "system:serviceaccount:kruntimes:gateway";
const OPTS = { subjects: [GATEWAY], allowTtlMs: 60_000, denyTtlMs: 5000, cacheSize: 2 };

function reviewer(table: Record<string, ReviewResult>) {
  const calls: string[] = [];
  const review = async (token: string) => {
    calls.push(token);
    await Bun.sleep(1);
    const r = table[token];
    if (!r) throw new Error("apiserver down");
    return r;
  };
  return { review, calls };
}

describe("DataplaneAuth", () => {
  const tokens = {
    good: { authenticated: true, username: GATEWAY },
    other: { authenticated: true, username: "system:serviceaccount:x:y" },
    bad: { authenticated: false, error: "invalid audience" },
  };
  test("allowed subject passes; decisions are cached by token, concurrent checks share one review", async () => {
    const { review, calls } = reviewer(tokens);
    const a = new DataplaneAuth(OPTS, review, createMetrics());
    await Promise.all([a.check("Bearer good"), a.check("Bearer good"), a.check("bearer good")]);
    await a.check("Bearer good");
    expect(calls).toEqual(["good"]);
  });
  test("missing/invalid token → UNAUTHENTICATED, other subject → PERMISSION_DENIED, outage → UNAVAILABLE", async () => {
    const { review, calls } = reviewer(tokens);
    const a = new DataplaneAuth(OPTS, review, createMetrics());
    const code = (p: Promise<void>) =>
      p.then(
        () => "ok",
        (e) => Code[ConnectError.from(e).code],
      );
    expect(await code(a.check(null))).toBe("Unauthenticated");
    expect(await code(a.check("Basic abc"))).toBe("Unauthenticated");
    expect(await code(a.check("Bearer bad"))).toBe("Unauthenticated");
    expect(await code(a.check("Bearer other"))).toBe("PermissionDenied");
    expect(await code(a.check("Bearer down"))).toBe("Unavailable");
    expect(await code(a.check("Bearer down"))).toBe("Unavailable");
    // Refusals are cached too; an outage is not (asked again).
    await code(a.check("Bearer other"));
    expect(calls).toEqual(["bad", "other", "down", "down"]);
  });
  test("TTLs expire and the cache stays bounded", async () => {
    let now = 0;
    const { review, calls } = reviewer(tokens);
    const a = new DataplaneAuth(OPTS, review, createMetrics(), () => now);
    await a.check("Bearer good");
    now = 59_000;
    await a.check("Bearer good");
    now = 61_000;
    await a.check("Bearer good");
    expect(calls).toEqual(["good", "good"]);
    await a.check("Bearer other").catch(() => {});
    await a.check("Bearer bad").catch(() => {});
    expect(a.cached).toBe(2);
  });
});

describe("checkFence", () => {
  const table = new FunctionTable();
  table.serve("u1", { namespace: "ns", name: "f", attempt: 2 });
  const ctx = { podUID: "pod-a", table, draining: false };
  const fence = (o: Partial<{ podUid: string; runUid: string; attempt: number }>) =>
    ({ namespace: "ns", runName: "f", runUid: "u1", podUid: "pod-a", attempt: 2, ...o }) as never;
  const reason = (r: unknown) =>
    r instanceof ConnectError
      ? RouteFailure_Reason[r.findDetails(RouteFailureSchema)[0]?.reason ?? 0]
      : "served";
  test("each mismatch has its own reason; a match is served", () => {
    expect(reason(checkFence(fence({}), ctx))).toBe("served");
    expect(reason(checkFence(fence({ podUid: "pod-b" }), ctx))).toBe("WRONG_POD");
    expect(reason(checkFence(fence({ runUid: "u2" }), ctx))).toBe("NOT_SERVED");
    expect(reason(checkFence(fence({ attempt: 1 }), ctx))).toBe("WRONG_ATTEMPT");
    expect(reason(checkFence(fence({}), { ...ctx, draining: true }))).toBe("DRAINING");
    const wrong = checkFence(fence({ attempt: 1 }), ctx) as ConnectError;
    expect(wrong.code).toBe(Code.FailedPrecondition);
    expect(wrong.findDetails(RouteFailureSchema)[0]).toMatchObject({ podUid: "pod-a", attempt: 2 });
  });
});

const PROTOCOLS = ["connect binary (fast path)", "connect JSON (router)", "gRPC-Web (router)"] as const;

for (const protocol of PROTOCOLS)
  describe(`the dataplane port: ${protocol}`, () => {
    const socket = join(tmpdir(), `krt-dp-test-${process.pid}-${PROTOCOLS.indexOf(protocol)}.sock`);
    let fake: ReturnType<typeof Bun.serve> | undefined;
    let dp: ReturnType<typeof serveDataplane> | undefined;
    const table = new FunctionTable();
    const metrics = createMetrics();
    const seen: {
      attempt: number;
      invocationId: string;
      timeoutMs: number;
      headers: Record<string, string>;
    }[] = [];

    beforeAll(() => {
      rmSync(socket, { force: true });
      const router = createConnectRouter();
      router.service(FunctionService, {
        async invoke(req) {
          seen.push({
            attempt: req.attempt,
            invocationId: req.invocationId,
            timeoutMs: req.timeoutMs,
            headers: req.headers,
          });
          const body = new TextDecoder().decode(req.body);
          if (body === "busy")
            throw new ConnectError("queue full", Code.ResourceExhausted, undefined, [
              {
                desc: InvokeFailureSchema,
                value: create(InvokeFailureSchema, { reason: InvokeFailure_Reason.BUSY, retryAfterMs: 250 }),
              },
            ]);
          if (body === "raise")
            return { handlerError: { type: "ValueError", message: "no", traceback: "tb", exitCode: 0 } };
          return { status: 200, contentType: "text/plain", body: new TextEncoder().encode(`echo:${body}`) };
        },
      });
      const h = createFetchHandler(router.handlers.find((x) => x.method.name === "Invoke") as never);
      fake = Bun.serve({ unix: socket, fetch: (r) => h(r) });
      table.serve("u1", { namespace: "ns", name: "f", attempt: 3 });
      dp = serveDataplane({
        host: "127.0.0.1",
        port: 0,
        socketPath: socket,
        podUID: "pod-a",
        table,
        functions: runtimeServerClients(socket).functions,
        auth: new DataplaneAuth(
          OPTS,
          reviewer({ good: { authenticated: true, username: GATEWAY } }).review,
          metrics,
        ),
        metrics,
        log: pino({ level: "silent" }),
        draining: () => false,
      });
    });
    afterAll(() => {
      dp?.stop(true);
      fake?.stop(true);
      rmSync(socket, { force: true });
    });

    const client = (token?: string) => {
      const baseUrl = `http://127.0.0.1:${dp?.port}`;
      if (protocol.startsWith("connect binary"))
        return dataplaneClient({ baseUrl, ...(token ? { token } : {}) });
      if (protocol.startsWith("connect JSON"))
        return dataplaneClient({ baseUrl, json: true, ...(token ? { token } : {}) });
      const auth: Interceptor = (next) => (req) => {
        if (token) req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      };
      return createClient(
        FunctionDataplaneService,
        createGrpcWebTransport({ baseUrl, interceptors: [auth] }),
      );
    };
    const fence = { namespace: "ns", runName: "f", runUid: "u1", podUid: "pod-a", attempt: 3 };
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e) => ConnectError.from(e),
      );

    test("forwards to the Runtime Server with the served attempt, headers and timeout", async () => {
      const res = await client("good").invoke({
        fence,
        invocationId: "i1",
        body: new TextEncoder().encode("hi"),
        headers: { "x-a": "1" },
      });
      expect(new TextDecoder().decode(res.result?.body)).toBe("echo:hi");
      expect(res.result?.status).toBe(200);
      await client("good").invoke({
        fence,
        invocationId: "i2",
        body: new TextEncoder().encode("x"),
        timeoutMs: 900,
      });
      await client("good").invoke({ fence, invocationId: "i3" }, { timeoutMs: 5000 });
      expect(seen.slice(-3).map((x) => [x.attempt, x.invocationId, x.headers["x-a"]])).toEqual([
        [3, "i1", "1"],
        [3, "i2", undefined],
        [3, "i3", undefined],
      ]);
      expect(seen.at(-2)?.timeoutMs).toBe(900);
      // The caller's deadline becomes the invocation's timeout (less what the hops used).
      expect(seen.at(-1)?.timeoutMs).toBeGreaterThan(4000);
      expect(seen.at(-1)?.timeoutMs).toBeLessThanOrEqual(5000);
    });
    test("a handler error is an answer, not an RPC error", async () => {
      const res = await client("good").invoke({
        fence,
        invocationId: "i4",
        body: new TextEncoder().encode("raise"),
      });
      expect(res.result?.handlerError).toMatchObject({ type: "ValueError", message: "no" });
    });
    test("the server's InvokeFailure passes through unchanged", async () => {
      const err = await failure(
        client("good").invoke({ fence, invocationId: "i5", body: new TextEncoder().encode("busy") }),
      );
      expect(err?.code).toBe(Code.ResourceExhausted);
      expect(err?.rawMessage).toBe("queue full");
      expect(err?.findDetails(InvokeFailureSchema)[0]).toMatchObject({
        reason: InvokeFailure_Reason.BUSY,
        retryAfterMs: 250,
      });
    });
    test("no token → UNAUTHENTICATED; stale route → FAILED_PRECONDITION with RouteFailure", async () => {
      expect((await failure(client().invoke({ fence, invocationId: "i6" })))?.code).toBe(
        Code.Unauthenticated,
      );
      const stale = await failure(
        client("good").invoke({ fence: { ...fence, attempt: 2 }, invocationId: "i7" }),
      );
      expect(stale?.code).toBe(Code.FailedPrecondition);
      expect(stale?.findDetails(RouteFailureSchema)[0]).toMatchObject({
        reason: RouteFailure_Reason.WRONG_ATTEMPT,
        podUid: "pod-a",
        attempt: 3,
      });
    });
    test("metrics count results with bounded labels", async () => {
      const text = await metrics.registry.metrics();
      expect(text).toContain('kruntimes_runtimed_function_invocations_total{result="ok"} 3');
      expect(text).toContain('kruntimes_runtimed_function_invocations_total{result="handler_error"} 1');
      expect(text).toContain('kruntimes_runtimed_function_invocations_total{result="busy"} 1');
      expect(text).toContain('kruntimes_runtimed_function_invocations_total{result="unauthenticated"} 1');
      expect(text).toContain('kruntimes_runtimed_function_invocations_total{result="stale_route"} 1');
      expect(text).toContain("kruntimes_runtimed_function_invocation_duration_seconds_count 5");
    });
    test("a Runtime Server that is not there: NOT_READY (not sent, safe to retry)", async () => {
      fake?.stop(true);
      rmSync(socket, { force: true });
      const err = await failure(client("good").invoke({ fence, invocationId: "i8" }));
      expect(err?.code).toBe(Code.FailedPrecondition);
      expect(err?.findDetails(InvokeFailureSchema)[0]?.reason).toBe(InvokeFailure_Reason.NOT_READY);
      expect(err?.rawMessage).toContain("not sent");
    });
  });

describe("fast-path helpers", () => {
  test("wrapResult is InvokeResponse{result} and hasHandlerError finds field 5", () => {
    const inner = toBinary(
      RuntimeInvokeResponseSchema,
      create(RuntimeInvokeResponseSchema, { status: 200, body: new Uint8Array(300).fill(7) }),
    );
    const wrapped = fromBinary(InvokeResponseSchema, wrapResult(inner));
    expect(wrapped.result?.body.length).toBe(300);
    expect(hasHandlerError(inner)).toBe(false);
    const failed = toBinary(
      RuntimeInvokeResponseSchema,
      create(RuntimeInvokeResponseSchema, { handlerError: { type: "E" }, durationMicros: 5 as never }),
    );
    expect(hasHandlerError(failed)).toBe(true);
  });
});
