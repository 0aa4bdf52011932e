/**
 * The gateway in-process against a stand-in apiserver and a stand-in runtimed dataplane (both speak
 * the real contracts): every protocol on every listener, the error table provoked one row at a time,
 * the route re-resolved after a move. The cluster suite (test/e2e/gateway.test.ts) repeats the
 * essentials against a real apiserver, real RBAC and real runtimed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { compressionGzip, createGrpcTransport } from "@connectrpc/connect-node";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  Failure_Reason,
  FailureSchema,
  FunctionService,
  HandlerErrorSchema,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import pino from "pino";
import { type Gateway, startGateway } from "./gateway.ts";
import { parseOptions } from "./options.ts";
import { type FakeDataplane, startFakeDataplane } from "./testing/fake-dataplane.ts";
import { dataplaneSlice, FakeKube, readyFunctionRun } from "./testing/fake-kube.ts";
import { makeTestPki, type TestPki } from "./testing/tls.ts";

const NS = "team";
let kube: FakeKube;
let pod1: FakeDataplane;
let pod2: FakeDataplane;
let gw: Gateway;
let pki: TestPki;
const serves1 = new Map<string, number>([
  ["uid-echo", 1],
  ["uid-small", 1],
  ["uid-moved", 1],
]);
const serves2 = new Map<string, number>();
const enc = new TextEncoder();
const dec = new TextDecoder();

beforeAll(async () => {
  pki = makeTestPki();
  kube = new FakeKube().start();
  kube.tokens.set("alice-token", "alice");
  kube.tokens.set("bob-token", "bob");
  for (const name of ["echo", "small", "moved", "pending", "ghost-pod", "nowhere"])
    kube.grant("alice", NS, name);
  pod1 = startFakeDataplane({ podUID: "pod-1", serves: serves1, recordAuth: true });
  pod2 = startFakeDataplane({ podUID: "pod-2", serves: serves2 });
  kube.putSlice(
    dataplaneSlice(NS, "python", [
      { uid: "pod-1", ip: "127.0.0.1", port: pod1.port },
      { uid: "pod-2", ip: "127.0.0.1", port: pod2.port },
    ]),
  );
  // Each pod listens on its own port; the slice carries one port, so pod 2 gets its own slice.
  kube.putSlice({ ...dataplaneSlice(NS, "python2", [{ uid: "pod-2", ip: "127.0.0.1", port: pod2.port }]) });
  const run = (name: string, extra: Partial<Parameters<typeof readyFunctionRun>[0]> = {}) =>
    readyFunctionRun({
      namespace: NS,
      name,
      uid: `uid-${name}`,
      pod: "pod-a",
      podUID: "pod-1",
      attempt: 1,
      ...extra,
    });
  kube.putRun(run("echo"));
  kube.putRun(run("small", { maxRequestBytes: 16 }));
  kube.putRun(run("moved"));
  kube.putRun(run("pending", { phase: "Pending" }));
  kube.putRun(run("nowhere", { podUID: "pod-unknown" }));
  const tokenFile = join(pki.dir, "dataplane-token");
  writeFileSync(tokenFile, "gateway-dataplane-token\n");
  const options = parseOptions(
    [
      "--host=127.0.0.1",
      "--http-port=0",
      "--grpc-port=0",
      "--https-port=0",
      "--metrics-port=0",
      `--tls-cert-file=${pki.certFile}`,
      `--tls-key-file=${pki.keyFile}`,
      `--dataplane-token-file=${tokenFile}`,
      "--max-concurrent-requests=64",
    ],
    {},
  );
  gw = await startGateway(options, { client: kube.client(), log: pino({ level: "silent" }) });
  await gw.routes.waitForSync();
  // Split the slice so pod 2 is reachable on its own port (pods share 127.0.0.1 here).
  kube.putSlice(dataplaneSlice(NS, "python", [{ uid: "pod-1", ip: "127.0.0.1", port: pod1.port }]));
});

afterAll(async () => {
  await gw?.stop(0);
  pod1?.stop();
  pod2?.stop();
  kube?.stop();
});

const http = () => `http://127.0.0.1:${gw.ports.http}`;
const https = () => `https://localhost:${gw.ports.https}`;

function plain(name: string, body: string | Uint8Array, headers: Record<string, string> = {}, base = http()) {
  return fetch(`${base}/v1/namespaces/${NS}/runs/${name}/invoke`, {
    method: "POST",
    body,
    headers: { authorization: "Bearer alice-token", "content-type": "text/plain", ...headers },
    tls: { ca: readFileSync(pki.caFile, "utf8") },
  } as RequestInit);
}

describe("plain HTTP route", () => {
  test("passes body, content type and headers through and back", async () => {
    const res = await plain("echo", "hello", { "content-type": "application/x-test", "x-test": "yes" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-test");
    expect(res.headers.get("x-echo-header")).toBe("yes");
    expect(res.headers.get("x-kruntimes-invocation-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.text()).toBe("hello");
  });

  test("honours the handler's status", async () => {
    expect((await plain("echo", "teapot")).status).toBe(418);
  });

  test("sends the gateway's own dataplane token, never the caller's", async () => {
    await plain("echo", "x");
    expect(pod1.auth.at(-1)).toBe("Bearer gateway-dataplane-token");
    expect(pod1.auth).not.toContain("Bearer alice-token");
  });

  test.each([
    ["no token", "echo", "x", {}, 401, "unauthenticated"],
    ["a garbage token", "echo", "x", { authorization: "Bearer nope" }, 401, "unauthenticated"],
    [
      "a caller without the grant",
      "echo",
      "x",
      { authorization: "Bearer bob-token" },
      403,
      "permission_denied",
    ],
    ["a missing Run", "ghost", "x", {}, 403, "permission_denied"],
    ["a Run that does not exist but is granted", "ghost-pod", "x", {}, 404, "not_found"],
    ["a Pending Run", "pending", "x", {}, 409, "failed_precondition"],
    ["a body above the Run's limit", "small", "x".repeat(17), {}, 413, "resource_exhausted"],
    ["a busy function", "echo", "busy", {}, 429, "resource_exhausted"],
    ["a handler error", "echo", "raise", {}, 500, "unknown"],
    ["a pod nobody knows", "nowhere", "x", {}, 503, "unavailable"],
    ["a passed deadline", "echo", "sleep:2000", { "connect-timeout-ms": "100" }, 504, "deadline_exceeded"],
  ] as const)("%s → %p", async (_what, name, body, headers, status, code) => {
    const h: Record<string, string> = { ...headers };
    if (_what === "no token") h.authorization = "";
    const res = await plain(name, body, h);
    expect(res.status).toBe(status);
    const err = (await res.json()) as Record<string, unknown>;
    expect(err.code).toBe(code);
    expect(String(err.message)).toContain(": "); // what happened, then what to do
  });

  test("errors carry their details and Retry-After", async () => {
    const busy = await plain("echo", "busy");
    expect(busy.headers.get("retry-after")).toBe("2");
    expect(((await busy.json()) as { reason: string }).reason).toBe("REASON_FUNCTION_BUSY");
    const pending = (await (await plain("pending", "x")).json()) as { runNotReady: unknown };
    expect(pending.runNotReady).toEqual({ phase: "Pending", mode: "function" });
    const raised = (await (await plain("echo", "raise")).json()) as { handlerError: Record<string, unknown> };
    expect(raised.handlerError.type).toBe("ValueError");
    expect(raised.handlerError.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    const unreachable = await plain("nowhere", "x");
    expect(unreachable.headers.get("retry-after")).toBe("1");
  });
});

describe("Connect, gRPC and gRPC-Web", () => {
  const request = { namespace: NS, run: "echo", body: enc.encode("ping"), contentType: "text/plain" };
  const headers = { authorization: "Bearer alice-token" };
  const ca = () => readFileSync(pki.caFile, "utf8");

  test("Connect JSON with plain fetch (as curl does)", async () => {
    const res = await fetch(`${http()}/kruntimes.gateway.v1.FunctionService/Invoke`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ namespace: NS, run: "echo", body: btoa("ping") }),
    });
    expect(res.status).toBe(200);
    const out = (await res.json()) as { status: number; body: string };
    expect(out.status).toBe(200);
    expect(atob(out.body)).toBe("ping");
  });

  const transports = {
    "Connect binary over HTTP/1.1": () => createConnectTransport({ baseUrl: http(), useBinaryFormat: true }),
    "Connect JSON over HTTP/1.1": () => createConnectTransport({ baseUrl: http() }),
    "gRPC-Web over HTTP/1.1": () => createGrpcWebTransport({ baseUrl: http() }),
    "gRPC over h2c": () => createGrpcTransport({ baseUrl: `http://127.0.0.1:${gw.ports.grpc}` }),
    "gRPC over TLS (h2, strict CA)": () =>
      createGrpcTransport({ baseUrl: https(), nodeOptions: { ca: ca(), servername: "localhost" } }),
    "Connect binary over TLS (fetch, strict CA)": () =>
      createConnectTransport({
        baseUrl: https(),
        useBinaryFormat: true,
        fetch: ((input: string | URL | Request, init?: RequestInit) =>
          fetch(input, { ...init, tls: { ca: ca() } } as RequestInit)) as typeof fetch,
      }),
  };

  test.each(Object.keys(transports))("%s: a call and a refusal with its detail", async (name) => {
    const client = createClient(FunctionService, transports[name as keyof typeof transports]());
    const res = await client.invoke(request, { headers });
    expect(dec.decode(res.body)).toBe("ping");
    expect(res.invocationId).toMatch(/^[0-9a-f-]{36}$/);
    const err = await client
      .invoke({ ...request, run: "pending" }, { headers })
      .catch((e) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).findDetails(RunNotReadySchema)[0]?.phase).toBe("Pending");
    const raised = await client
      .invoke({ ...request, body: enc.encode("raise") }, { headers })
      .catch((e) => ConnectError.from(e));
    expect((raised as ConnectError).code).toBe(Code.Unknown);
    expect((raised as ConnectError).findDetails(HandlerErrorSchema)[0]?.type).toBe("ValueError");
    const busy = await client
      .invoke({ ...request, body: enc.encode("busy") }, { headers })
      .catch((e) => ConnectError.from(e));
    expect((busy as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((busy as ConnectError).findDetails(FailureSchema)[0]?.reason).toBe(Failure_Reason.FUNCTION_BUSY);
    expect((busy as ConnectError).metadata.get("retry-after")).toBe("2");
    const noToken = await client.invoke(request).catch((e) => ConnectError.from(e));
    expect((noToken as ConnectError).code).toBe(Code.Unauthenticated);
  });

  test("gRPC with a gzip-compressed message (not the unary path's: connect-node's adapter serves it)", async () => {
    const client = createClient(
      FunctionService,
      createGrpcTransport({
        baseUrl: `http://127.0.0.1:${gw.ports.grpc}`,
        sendCompression: compressionGzip,
        compressMinBytes: 0,
      }),
    );
    const res = await client.invoke({ ...request, body: enc.encode("zipped") }, { headers });
    expect(dec.decode(res.body)).toBe("zipped");
  });

  test("the caller's deadline (grpc-timeout) becomes DEADLINE_EXCEEDED", async () => {
    const client = createClient(
      FunctionService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${gw.ports.grpc}` }),
    );
    const err = await client
      .invoke({ ...request, body: enc.encode("sleep:2000") }, { headers, timeoutMs: 100 })
      .catch((e) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.DeadlineExceeded);
  });

  test("the plain route over https with strict verification", async () => {
    const res = await plain("echo", "secure", {}, https());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("secure");
  });

  test("a certificate from another CA is refused", async () => {
    const other = makeTestPki();
    const failed = await fetch(`${https()}/openapi.json`, {
      tls: { ca: readFileSync(other.caFile, "utf8") },
    } as RequestInit).then(
      () => false,
      () => true,
    );
    expect(failed).toBe(true);
  });
});

describe("routing", () => {
  test("a Run moved to another pod is re-resolved once and called there", async () => {
    expect((await plain("moved", "a")).status).toBe(200);
    // The Run moves: pod 2 serves attempt 2; pod 1 no longer serves it. The informer may lag.
    serves1.delete("uid-moved");
    serves2.set("uid-moved", 2);
    kube.putSlice(dataplaneSlice(NS, "python2", [{ uid: "pod-2", ip: "127.0.0.1", port: pod2.port }]));
    kube.putRun(
      readyFunctionRun({
        namespace: NS,
        name: "moved",
        uid: "uid-moved",
        pod: "pod-b",
        podUID: "pod-2",
        attempt: 2,
      }),
    );
    const res = await plain("moved", "b");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("b");
  });

  test("a pod no EndpointSlice lists is called at status.endpoint.address; a dead one is 503 + Retry-After", async () => {
    const serves3 = new Map<string, number>([["uid-loopback", 1]]);
    const pod3 = startFakeDataplane({ podUID: "pod-3", serves: serves3 });
    try {
      for (const name of ["loopback", "dead", "leaving"]) kube.grant("alice", NS, name);
      const base = { namespace: NS, pod: "pod-c", podUID: "pod-3", attempt: 1 };
      kube.putRun(
        readyFunctionRun({
          ...base,
          name: "loopback",
          uid: "uid-loopback",
          address: `127.0.0.1:${pod3.port}`,
        }),
      );
      const res = await plain("loopback", "via status");
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("via status");
      // Nothing listens there: refused, re-resolved once (same pod, same attempt), then 503.
      const dead = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
      const deadPort = dead.port;
      dead.stop(true);
      kube.putRun(
        readyFunctionRun({
          ...base,
          name: "dead",
          uid: "uid-dead",
          podUID: "pod-4",
          address: `127.0.0.1:${deadPort}`,
        }),
      );
      const refused = await plain("dead", "x");
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(((await refused.json()) as { reason: string }).reason).toBe("REASON_UNREACHABLE");
      // The slice says the pod is terminating: not called, whatever the status says.
      kube.putSlice({
        ...dataplaneSlice(NS, "python3", [{ uid: "pod-3", ip: "127.0.0.1", port: pod3.port }]),
      });
      kube.putRun(
        readyFunctionRun({ ...base, name: "leaving", uid: "uid-leaving", address: `127.0.0.1:${pod3.port}` }),
      );
      serves3.set("uid-leaving", 1);
      expect((await plain("leaving", "x")).status).toBe(200);
      const terminating = dataplaneSlice(NS, "python3", [{ uid: "pod-3", ip: "127.0.0.1", port: pod3.port }]);
      for (const ep of terminating.endpoints ?? []) ep.conditions = { ready: false, terminating: true };
      kube.putSlice(terminating);
      await Bun.sleep(50);
      const leaving = await plain("leaving", "x");
      expect(leaving.status).toBe(503);
      expect(((await leaving.json()) as { message: string }).message).toContain("terminating");
    } finally {
      pod3.stop();
    }
  });

  test("/openapi.json, /v1/protoset, /readyz and /metrics", async () => {
    const doc = (await (await fetch(`${http()}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain("/v1/namespaces/{namespace}/runs/{name}/invoke");
    const set = new Uint8Array(await (await fetch(`${http()}/v1/protoset`)).arrayBuffer());
    expect(dec.decode(set)).toContain("kruntimes/gateway/v1/function.proto");
    const ready = await fetch(`http://127.0.0.1:${gw.ports.metrics}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${gw.ports.metrics}/metrics`)).text();
    expect(metrics).toContain(
      'kruntimes_gateway_requests_total{service="kruntimes.gateway.v1.FunctionService",method="Invoke",protocol="http",code="ok"}',
    );
    expect(metrics).toContain('kruntimes_gateway_auth_cache_total{result="hit"}');
    expect(metrics).toContain('kruntimes_gateway_routes_reresolved_total{result="rerouted"} 1');
  });
});
