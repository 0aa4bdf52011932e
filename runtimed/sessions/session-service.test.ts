import { describe, expect, test } from "bun:test";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { ExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import pino from "pino";
import { Registry } from "prom-client";
import { dataplaneHandler } from "../dataplane/dataplane-server.ts";
import { DataplaneAuth } from "../dataplane/token-auth.ts";
import { FunctionTable } from "../functions/function-table.ts";
import { createMetrics } from "../metrics.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import { QueueBudget } from "./mutation-queue.ts";
import { createSessionMetrics } from "./session-metrics.ts";
import { Session, SessionTable } from "./session-table.ts";

const GATEWAY = "system:serviceaccount:kruntimes:gateway";
const POD = "pod-uid-1";

/** A Runtime Server stand-in: Exec sleeps until released (per command), reads answer at once. */
function fakeServer() {
  const gates = new Map<string, () => void>();
  const started: string[] = [];
  const cancelled: string[] = [];
  const server = {
    async *exec(
      req: { operationId: string; command?: { program: { case?: string; value?: unknown } } },
      o?: { signal?: AbortSignal },
    ) {
      const line = String(req.command?.program.value ?? "");
      started.push(line);
      yield { event: { case: "started", value: { pid: 1, startedMicros: 0 } } };
      if (line.startsWith("block")) {
        await new Promise<void>((resolve) => {
          gates.set(req.operationId, resolve);
          o?.signal?.addEventListener("abort", () => resolve());
        });
        yield { event: { case: "exited", value: { reason: ExitReason.CANCELLED, exitCode: 0 } } };
        return;
      }
      yield {
        event: { case: "output", value: { stream: "stdout", data: new TextEncoder().encode(`${line}\n`) } },
      };
      yield { event: { case: "exited", value: { reason: ExitReason.EXITED, exitCode: 0 } } };
    },
    async cancelOperation(req: { operationId: string }) {
      cancelled.push(req.operationId);
      gates.get(req.operationId)?.();
      return { cancelled: true };
    },
    async stat() {
      return { info: { path: "", name: "", type: 2 } };
    },
    async listFiles() {
      return { entries: [], nextPageToken: "" };
    },
    async makeDir(req: { path: string }) {
      started.push(`mkdir ${req.path}`);
      return { info: { path: req.path, name: req.path, type: 2 } };
    },
  };
  return { server: server as unknown as RuntimeServerClients["sessions"], started, cancelled };
}

function setup(maxQueued = 8) {
  const log = pino({ level: "silent" });
  const table = new SessionTable();
  const s = new Session(
    "run-1",
    "ns",
    "s",
    1,
    {
      idleTimeoutMs: 0,
      defaultOperationTimeoutMs: 60_000,
      maxOperationTimeoutMs: 60_000,
      maxQueuedOperations: maxQueued,
    },
    new QueueBudget(100),
    log,
  );
  table.serve(s);
  const fake = fakeServer();
  const metrics = createMetrics();
  const auth = new DataplaneAuth(
    { subjects: [GATEWAY], allowTtlMs: 60_000, denyTtlMs: 5000, cacheSize: 4, audience: "a" } as never,
    async () => ({ authenticated: true, username: GATEWAY }),
    metrics,
  );
  const handle = dataplaneHandler({
    socketPath: "/nonexistent",
    podUID: POD,
    table: new FunctionTable(),
    functions: {} as RuntimeServerClients["functions"],
    auth,
    metrics,
    log,
    draining: () => false,
    sessions: { table, sessions: fake.server, metrics: createSessionMetrics(new Registry(), table) },
  });
  const client = (fence: { run?: string; pod?: string; attempt?: string } = {}) => {
    const h: Interceptor = (next) => (req) => {
      req.header.set("authorization", "Bearer t");
      req.header.set("x-kruntimes-run-uid", fence.run ?? "run-1");
      req.header.set("x-kruntimes-pod-uid", fence.pod ?? POD);
      req.header.set("x-kruntimes-attempt", fence.attempt ?? "1");
      return next(req);
    };
    return createClient(
      SessionService,
      createConnectTransport({
        baseUrl: "http://dp",
        useBinaryFormat: true,
        interceptors: [h],
        fetch: ((input: string | URL | Request, init?: RequestInit) =>
          handle(new Request(input as string, init))) as typeof fetch,
      }),
    );
  };
  return { s, fake, client };
}

const target = { namespace: "ns", run: "s" };
const shell = (v: string) => ({ program: { case: "shell" as const, value: v } });

async function first(it: AsyncIterable<{ operationId: string; event: { case?: string } }>) {
  const i = it[Symbol.asyncIterator]();
  const r = await i.next();
  return { operationId: r.value?.operationId as string, queued: r.value?.event.case === undefined, i };
}

describe("SessionService on the dataplane", () => {
  test("the fence from headers: wrong pod, unknown Run, wrong attempt → FAILED_PRECONDITION + RouteFailure", async () => {
    const { client } = setup();
    const cases: [Record<string, string>, RouteFailure_Reason][] = [
      [{ pod: "other" }, RouteFailure_Reason.WRONG_POD],
      [{ run: "run-2" }, RouteFailure_Reason.NOT_SERVED],
      [{ attempt: "2" }, RouteFailure_Reason.WRONG_ATTEMPT],
    ];
    for (const [fence, reason] of cases) {
      const err = await client(fence)
        .stat({ target, path: "" })
        .then(
          () => undefined,
          (e) => ConnectError.from(e),
        );
      expect(err?.code).toBe(Code.FailedPrecondition);
      expect(err?.findDetails(RouteFailureSchema)[0]?.reason).toBe(reason);
    }
  });

  test("mutations queue in order behind a running Exec; reads do not wait; cancel by the queued notice's ID", async () => {
    const { client, fake } = setup();
    const c = client();
    const blocker = await first(c.exec({ target, command: shell("block") }));
    expect(blocker.queued).toBe(false);
    const a = await first(c.exec({ target, command: shell("a") }));
    expect(a.queued).toBe(true);
    const mk = c.makeDir({ target, path: "d" });
    const b = await first(c.exec({ target, command: shell("b") }));
    // Reads answer while three mutations wait.
    expect((await c.stat({ target, path: "" })).info?.type).toBe(2);
    expect((await c.listFiles({ target, path: "" })).entries).toEqual([]);
    expect(fake.started).toEqual(["block"]);
    // Cancel the queued "b", then the running blocker: a, mkdir run in order, b never.
    expect((await c.cancelOperation({ target, operationId: b.operationId })).cancelled).toBe(true);
    const bEnd = await b.i.next().then(
      () => "ok",
      (e) => Code[ConnectError.from(e).code],
    );
    expect(bEnd).toBe("Canceled");
    await c.cancelOperation({ target, operationId: blocker.operationId });
    for (;;) if ((await a.i.next()).done) break;
    await mk;
    expect(fake.started).toEqual(["block", "a", "mkdir d"]);
    expect(fake.cancelled).toEqual([blocker.operationId]);
  });

  test("queue full → RESOURCE_EXHAUSTED; a session refusing (finalizing) → FAILED_PRECONDITION", async () => {
    const { client, s } = setup(1);
    const c = client();
    const blocker = await first(c.exec({ target, command: shell("block") }));
    await first(c.exec({ target, command: shell("a") }));
    const full = await c.makeDir({ target, path: "x" }).then(
      () => "ok",
      (e) => ConnectError.from(e),
    );
    expect((full as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((full as ConnectError).rawMessage).toBe("session busy");
    await c.cancelOperation({ target, operationId: blocker.operationId });
    s.refusing = "the session is finalizing";
    const refused = await c.stat({ target, path: "" }).then(
      () => "ok",
      (e) => Code[ConnectError.from(e).code],
    );
    expect(refused).toBe("FailedPrecondition");
  });
});
