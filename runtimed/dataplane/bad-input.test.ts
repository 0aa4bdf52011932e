/**
 * runtimed's dataplane port given bad input (in-process, loopback, a stand-in Runtime Server on
 * its Unix socket): malformed Connect and gRPC-Web bodies, wrong content types, invalid UTF-8,
 * huge headers and bodies — with and without a token. Each gets a clean error code, the port's
 * memory stays bounded, and a good call still works afterwards. Slow clients are Bun's own header
 * timeout, the same as the gateway's HTTP/1.1 listener (gateway/bad-input.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import pino from "pino";
import { FunctionTable } from "../functions/function-table.ts";
import { createMetrics } from "../metrics.ts";
import { runtimeServerClients } from "../runtime-server/client.ts";
import { dataplaneClient } from "./dataplane-client.ts";
import { DATAPLANE_MAX_BODY_BYTES, serveDataplane } from "./dataplane-server.ts";
import { DataplaneAuth } from "./token-auth.ts";

const GATEWAY = "system:serviceaccount:kruntimes:gateway";
const INVOKE = "/kruntimes.dataplane.v1.FunctionDataplaneService/Invoke";
const socket = join(tmpdir(), `krt-dp-bad-${process.pid}.sock`);
let fake: ReturnType<typeof Bun.serve>;
let dp: ReturnType<typeof serveDataplane>;
const fence = { namespace: "ns", runName: "f", runUid: "u1", podUid: "pod-a", attempt: 1 };

beforeAll(() => {
  rmSync(socket, { force: true });
  const router = createConnectRouter();
  router.service(FunctionService, {
    async invoke(req) {
      return { status: 200, contentType: "text/plain", body: req.body };
    },
  });
  const h = createFetchHandler(router.handlers.find((x) => x.method.name === "Invoke") as never);
  fake = Bun.serve({ unix: socket, fetch: (r) => h(r) });
  const table = new FunctionTable();
  table.serve("u1", { namespace: "ns", name: "f", attempt: 1 });
  const metrics = createMetrics();
  dp = serveDataplane({
    host: "127.0.0.1",
    port: 0,
    socketPath: socket,
    podUID: "pod-a",
    table,
    functions: runtimeServerClients(socket).functions,
    auth: new DataplaneAuth(
      { subjects: [GATEWAY], allowTtlMs: 60_000, denyTtlMs: 5000, cacheSize: 8 },
      async (token) =>
        token === "good"
          ? { authenticated: true, username: GATEWAY }
          : { authenticated: false, error: "bad token" },
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

const url = () => `http://127.0.0.1:${dp.port}${INVOKE}`;
const post = (body: string | Uint8Array, headers: Record<string, string>) =>
  fetch(url(), { method: "POST", body, headers: { "connect-protocol-version": "1", ...headers } });
const code = async (res: Response) => ((await res.json()) as { code: string }).code;

async function stillServing(): Promise<void> {
  const res = await dataplaneClient({ baseUrl: `http://127.0.0.1:${dp.port}`, token: "good" }).invoke({
    fence,
    body: new TextEncoder().encode("ok"),
    contentType: "text/plain",
  });
  expect(new TextDecoder().decode(res.result?.body)).toBe("ok");
}

describe("runtimed dataplane: bad input gets a clean error and the port keeps serving", () => {
  test("a body over the port's bound is 413 before any handler, with or without a token", async () => {
    const rssBefore = process.memoryUsage().rss;
    const big = new Uint8Array(DATAPLANE_MAX_BODY_BYTES + 1024 * 1024);
    for (const auth of [{}, { authorization: "Bearer good" }] as Record<string, string>[]) {
      for (const ct of ["application/json", "application/proto"]) {
        const res = await post(big, { "content-type": ct, ...auth }).catch((e: Error) => e);
        if (res instanceof Response) expect(res.status).toBe(413);
      }
    }
    Bun.gc(true);
    // The test's own buffer (~23 MiB) is counted; four bodies of it must not be held on top.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    await stillServing();
  });

  test("without a token: unauthenticated, whatever the body", async () => {
    const res = await post(new Uint8Array([1, 2, 3]), { "content-type": "application/proto" });
    expect(res.status).toBe(401);
    expect(await code(res)).toBe("unauthenticated");
  });

  test("garbage protobuf (fast path) is invalid_argument", async () => {
    const res = await post(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]), {
      "content-type": "application/proto",
      authorization: "Bearer good",
    });
    expect(res.status).toBe(400);
    expect(await code(res)).toBe("invalid_argument");
  });

  test("malformed JSON and invalid UTF-8 in JSON are invalid_argument", async () => {
    for (const body of [
      "{not json",
      new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    ]) {
      const res = await post(body, { "content-type": "application/json", authorization: "Bearer good" });
      expect(res.status).toBe(400);
      expect(await code(res)).toBe("invalid_argument");
    }
  });

  test("a content type that is no Connect codec is 415", async () => {
    const res = await post("<x/>", { "content-type": "text/xml", authorization: "Bearer good" });
    expect(res.status).toBe(415);
  });

  test("a truncated gRPC-Web frame is INVALID_ARGUMENT", async () => {
    const frame = new Uint8Array(15);
    new DataView(frame.buffer).setUint32(1, 1000);
    const res = await fetch(url(), {
      method: "POST",
      body: frame,
      headers: { "content-type": "application/grpc-web+proto", authorization: "Bearer good" },
    });
    const status = res.headers.get("grpc-status") ?? /grpc-status:\s*(\d+)/.exec(await res.text())?.[1];
    expect(status).toBe("3");
  });

  test("an unknown path is 404", async () => {
    const res = await fetch(`http://127.0.0.1:${dp.port}/nope`, { method: "POST" });
    expect(res.status).toBe(404);
  });

  test("huge headers are 431", async () => {
    const reply = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      const s = net.connect(dp.port ?? 0, "127.0.0.1", () =>
        s.write(
          `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(256 * 1024)}\r\nConnection: close\r\n\r\n`,
        ),
      );
      s.on("data", (c: Buffer) => chunks.push(c));
      s.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
      s.on("error", () => resolve(Buffer.concat(chunks).toString("latin1")));
    });
    expect(reply).toStartWith("HTTP/1.1 431");
    await stillServing();
  });
});
