/**
 * The gateway's SessionService and file routes in-process, against a stand-in apiserver and a
 * stand-in runtimed that serves the real gateway.v1.SessionService contract: streaming end to end
 * on every protocol (the stand-in holds the stream open until the test has seen the first chunk),
 * authorization on runs/session, the fence and caller headers, the mode check, busy → 429 +
 * Retry-After, size bounds, re-resolving a moved session, the curl file routes (chunked upload,
 * streamed download, paged directory listing, errors), metrics, OpenAPI and the protoset.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import type { Run } from "@kruntimes/api";
import {
  Failure_Reason,
  FailureSchema,
  FunctionService,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { FileType } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import pino from "pino";
import { type Gateway, startGateway } from "../gateway.ts";
import { parseOptions } from "../options.ts";
import { dataplaneSlice, FakeKube, readyFunctionRun } from "../testing/fake-kube.ts";
import { makeTestPki, type TestPki } from "../testing/tls.ts";
import { PUT_CHUNK_BYTES } from "./file-routes.ts";
import {
  type StandinSessionDataplane,
  startStandinSessionDataplane,
} from "./testing/standin-session-dataplane.ts";

const NS = "team";
const MAX_REQUEST = 1024 * 1024;
let kube: FakeKube;
let pod1: StandinSessionDataplane;
let pod2: StandinSessionDataplane;
let gw: Gateway;
let pki: TestPki;
const serves1 = new Map<string, number>([
  ["uid-box", 1],
  ["uid-moved", 1],
]);
const serves2 = new Map<string, number>();
const enc = new TextEncoder();
const dec = new TextDecoder();

function sessionRun(o: Parameters<typeof readyFunctionRun>[0]): Run {
  const run = readyFunctionRun(o) as unknown as { spec: Record<string, unknown> };
  run.spec = { runtime: "bash", mode: { session: {} } };
  return run as unknown as Run;
}

beforeAll(async () => {
  pki = makeTestPki();
  kube = new FakeKube().start();
  kube.tokens.set("alice-token", "alice");
  kube.tokens.set("bob-token", "bob");
  kube.tokens.set("carol-token", "carol");
  for (const name of ["box", "moved", "pending", "fn", "ghost"]) kube.grant("alice", NS, name, "session");
  kube.grant("alice", NS, "box-fn", "invoke");
  // carol may invoke box (a function grant), not drive it as a session
  kube.grant("carol", NS, "box", "invoke");
  pod1 = startStandinSessionDataplane({ podUID: "pod-1", serves: serves1 });
  pod2 = startStandinSessionDataplane({ podUID: "pod-2", serves: serves2 });
  kube.putSlice(dataplaneSlice(NS, "bash", [{ uid: "pod-1", ip: "127.0.0.1", port: pod1.port }]));
  kube.putSlice(dataplaneSlice(NS, "bash2", [{ uid: "pod-2", ip: "127.0.0.1", port: pod2.port }]));
  const base = { namespace: NS, pod: "pod-a", podUID: "pod-1", attempt: 1 };
  kube.putRun(sessionRun({ ...base, name: "box", uid: "uid-box" }));
  kube.putRun(sessionRun({ ...base, name: "moved", uid: "uid-moved" }));
  kube.putRun(sessionRun({ ...base, name: "pending", uid: "uid-pending", phase: "Pending" }));
  kube.putRun(readyFunctionRun({ ...base, name: "fn", uid: "uid-fn" }));
  kube.putRun(readyFunctionRun({ ...base, name: "box-fn", uid: "uid-box-fn" }));
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
      `--max-request-bytes=${MAX_REQUEST}`,
    ],
    {},
  );
  gw = await startGateway(options, { client: kube.client(), log: pino({ level: "silent" }) });
  await gw.routes.waitForSync();
});

afterAll(async () => {
  await gw?.stop(0);
  pod1?.stop();
  pod2?.stop();
  kube?.stop();
});

const http = () => `http://127.0.0.1:${gw.ports.http}`;
const https = () => `https://localhost:${gw.ports.https}`;
const ca = () => readFileSync(pki.caFile, "utf8");
const alice = { authorization: "Bearer alice-token" };
const target = (run = "box") => ({ namespace: NS, run });
const tlsFetch = ((input: string | URL | Request, init?: RequestInit) =>
  fetch(input, { ...init, tls: { ca: ca() } } as RequestInit)) as typeof fetch;

const transports: Record<string, () => Transport> = {
  "Connect binary over HTTP/1.1": () => createConnectTransport({ baseUrl: http(), useBinaryFormat: true }),
  "Connect JSON over HTTP/1.1": () => createConnectTransport({ baseUrl: http() }),
  "gRPC-Web over HTTP/1.1": () => createGrpcWebTransport({ baseUrl: http() }),
  "gRPC over h2c": () => createGrpcTransport({ baseUrl: `http://127.0.0.1:${gw.ports.grpc}` }),
  "gRPC over TLS (h2, strict CA)": () =>
    createGrpcTransport({ baseUrl: https(), nodeOptions: { ca: ca(), servername: "localhost" } }),
  "Connect binary over TLS (fetch, strict CA)": () =>
    createConnectTransport({ baseUrl: https(), useBinaryFormat: true, fetch: tlsFetch }),
};

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("the call did not fail");
}

describe("SessionService over every protocol", () => {
  test.each(Object.keys(transports))("%s: Exec streams each chunk as it is produced", async (name) => {
    const client = createClient(SessionService, (transports[name] as () => Transport)());
    const events: string[] = [];
    const stream = client.exec(
      { target: target(), command: { program: { case: "argv", value: { args: ["gate", "first"] } } } },
      { headers: alice },
    );
    for await (const ev of stream) {
      if (ev.event.case === "started") events.push("started");
      if (ev.event.case === "output") {
        events.push(`${ev.event.value.stream}:${dec.decode(ev.event.value.data)}`);
        // runtimed holds the command until the test has seen its first output: a gateway that
        // buffered the stream would never get here.
        if (events.length === 2) pod1.release();
      }
      if (ev.event.case === "exited") events.push(`exited:${ev.event.value.exitCode}`);
      expect(ev.operationId).toBe("op-1");
    }
    expect(events).toEqual(["started", "stdout:first\n", "stderr:released\n", "exited:0"]);
  });

  test.each(Object.keys(transports))("%s: unary calls, and a refusal with its detail", async (name) => {
    const client = createClient(SessionService, (transports[name] as () => Transport)());
    await client.makeDir({ target: target(), path: `dir-${name.length}` }, { headers: alice });
    const st = await client.stat({ target: target(), path: `dir-${name.length}` }, { headers: alice });
    expect(st.info?.type).toBe(FileType.DIRECTORY);
    const ps = await client.listProcesses({ target: target() }, { headers: alice });
    expect(ps.processes[0]?.processId).toBe("p-1");
    const err = await failure(client.stat({ target: target("pending"), path: "" }, { headers: alice }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(RunNotReadySchema)[0]).toMatchObject({ phase: "Pending", mode: "session" });
  });

  test("every other method is forwarded with its answer (processes, cancel, remove, rename)", async () => {
    const client = createClient(SessionService, transports["gRPC over h2c"]?.() as Transport);
    const h = { headers: alice };
    pod1.files.set("r/a.txt", enc.encode("a"));
    expect((await client.startProcess({ target: target(), processId: "srv" }, h)).process?.running).toBe(
      true,
    );
    expect(
      (await client.signalProcess({ target: target(), processId: "srv", signal: "SIGTERM" }, h)).process
        ?.signal,
    ).toBe("SIGTERM");
    expect(
      (await client.waitProcess({ target: target(), processId: "srv", timeoutMs: 10 }, h)).process?.running,
    ).toBe(false);
    expect((await client.cancelOperation({ target: target(), operationId: "op-1" }, h)).cancelled).toBe(true);
    expect((await client.rename({ target: target(), from: "r/a.txt", to: "r/b.txt" }, h)).info?.path).toBe(
      "r/b.txt",
    );
    expect((await client.remove({ target: target(), path: "r/b.txt" }, h)).removed).toBe(true);
    expect(pod1.files.has("r/b.txt")).toBe(false);
    expect(pod1.calls.slice(-6).map((c) => c.method)).toEqual([
      "StartProcess",
      "SignalProcess",
      "WaitProcess",
      "CancelOperation",
      "Rename",
      "Remove",
    ]);
  });

  test("ReadFile streams chunks; a missing file is NOT_FOUND, a path outside the workspace PERMISSION_DENIED", async () => {
    pod1.files.set(
      "big.bin",
      new Uint8Array(200 * 1024).map((_, i) => i % 251),
    );
    const client = createClient(SessionService, transports["gRPC over h2c"]?.() as Transport);
    const chunks: Uint8Array[] = [];
    let size = 0n;
    for await (const c of client.readFile({ target: target(), path: "big.bin" }, { headers: alice })) {
      if (c.info) size = c.info.size;
      chunks.push(c.data);
    }
    expect(chunks.length).toBe(4);
    expect(size).toBe(200n * 1024n);
    expect(Buffer.concat(chunks).equals(Buffer.from(pod1.files.get("big.bin") as Uint8Array))).toBe(true);
    const missing = await failure(
      (async () => {
        for await (const _ of client.readFile({ target: target(), path: "nope" }, { headers: alice }));
      })(),
    );
    expect(missing.code).toBe(Code.NotFound);
    const outside = await failure(
      client.stat({ target: target(), path: "../etc/passwd" }, { headers: alice }),
    );
    expect(outside.code).toBe(Code.PermissionDenied);
  });

  test("runtimed gets the fence, the caller's username and the gateway's token — never the caller's", async () => {
    const client = createClient(SessionService, transports["Connect binary over HTTP/1.1"]?.() as Transport);
    await client.stat({ target: target(), path: "" }, { headers: alice });
    const seen = pod1.calls.at(-1);
    expect(seen).toEqual({
      method: "Stat",
      caller: "alice",
      authorization: "Bearer gateway-dataplane-token",
      runUID: "uid-box",
      podUID: "pod-1",
      attempt: "1",
    });
  });
});

describe("authorization and errors", () => {
  const client = () =>
    createClient(SessionService, transports["Connect binary over HTTP/1.1"]?.() as Transport);
  const stat = (run: string, headers: Record<string, string>) =>
    failure(client().stat({ target: target(run), path: "" }, { headers }));

  test.each([
    ["no token", "box", {}, Code.Unauthenticated],
    ["a bad token", "box", { authorization: "Bearer nope" }, Code.Unauthenticated],
    ["a caller without any grant", "box", { authorization: "Bearer bob-token" }, Code.PermissionDenied],
    [
      "a caller granted runs/invoke only",
      "box",
      { authorization: "Bearer carol-token" },
      Code.PermissionDenied,
    ],
    ["a missing Run, not granted", "nothing", alice, Code.PermissionDenied],
    ["a missing Run, granted", "ghost", alice, Code.NotFound],
    ["a bad name", "Bad_Name", alice, Code.InvalidArgument],
  ] as const)("%s → %s", async (_what, run, headers, code) => {
    const err = await stat(run, headers);
    expect(err.code).toBe(code);
  });

  test("the wrong mode is FAILED_PRECONDITION with the Run's mode, both ways", async () => {
    const err = await stat("fn", alice);
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(RunNotReadySchema)[0]).toMatchObject({ phase: "Ready", mode: "function" });
    kube.grant("alice", NS, "box", "invoke");
    const fn = createClient(
      FunctionService,
      createConnectTransport({ baseUrl: http(), useBinaryFormat: true }),
    );
    const wrong = await failure(
      fn.invoke({ namespace: NS, run: "box", body: enc.encode("x") }, { headers: alice }),
    );
    expect(wrong.code).toBe(Code.FailedPrecondition);
    expect(wrong.findDetails(RunNotReadySchema)[0]).toMatchObject({ phase: "Ready", mode: "session" });
  });

  test("a full session queue is RESOURCE_EXHAUSTED with runtimed's Retry-After", async () => {
    const err = await failure(
      (async () => {
        for await (const _ of client().exec(
          { target: target(), command: { program: { case: "argv", value: { args: ["busy"] } } } },
          { headers: alice },
        ));
      })(),
    );
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.metadata.get("retry-after")).toBe("3");
    expect(err.message).toContain("session busy");
    for (const name of [
      "Connect binary over HTTP/1.1",
      "gRPC over h2c",
      "Connect binary over TLS (fetch, strict CA)",
    ])
      for (const how of ["busy-bare", "busy-queued"]) {
        const c = createClient(SessionService, (transports[name] as () => Transport)());
        const bare = await failure(
          (async () => {
            for await (const _ of c.exec(
              { target: target(), command: { program: { case: "argv", value: { args: [how] } } } },
              { headers: alice },
            ));
          })(),
        );
        expect([name, how, bare.code, bare.metadata.get("retry-after")]).toEqual([
          name,
          how,
          Code.ResourceExhausted,
          "1",
        ]);
      }
  });

  test("a WriteFile chunk or stdin above --max-request-bytes is refused before runtimed sees it", async () => {
    const before = pod1.writes.length;
    const err = await failure(
      client().writeFile(
        { target: target(), path: "x", uploadId: "u", data: new Uint8Array(MAX_REQUEST + 1), last: true },
        { headers: alice },
      ),
    );
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.findDetails(FailureSchema)[0]?.reason).toBe(Failure_Reason.REQUEST_TOO_LARGE);
    expect(pod1.writes.length).toBe(before);
  });

  test("the Connect pass-through on the HTTP/1.1 listener: ReadFile chunks, NOT_FOUND, a stale route re-resolved, counted once", async () => {
    const c = client();
    pod1.files.set("pt.bin", new Uint8Array(150 * 1024).fill(7));
    let bytes = 0;
    for await (const chunk of c.readFile({ target: target(), path: "pt.bin" }, { headers: alice }))
      bytes += chunk.data.byteLength;
    expect(bytes).toBe(150 * 1024);
    const missing = await failure(
      (async () => {
        for await (const _ of c.readFile({ target: target(), path: "absent" }, { headers: alice }));
      })(),
    );
    expect(missing.code).toBe(Code.NotFound);
    const denied = await failure(
      (async () => {
        for await (const _ of c.readFile(
          { target: target(), path: "x" },
          { headers: { authorization: "Bearer bob-token" } },
        ));
      })(),
    );
    expect(denied.code).toBe(Code.PermissionDenied);
    // A Run that moved: the first pod refuses the fence, the route is re-resolved, pod 3 answers.
    kube.grant("alice", NS, "wander", "session");
    const serves3 = new Map<string, number>();
    const pod3 = startStandinSessionDataplane({ podUID: "pod-3", serves: serves3 });
    try {
      kube.putRun(
        sessionRun({
          namespace: NS,
          name: "wander",
          uid: "uid-wander",
          pod: "a",
          podUID: "pod-1",
          attempt: 1,
        }),
      );
      serves1.set("uid-wander", 1);
      const lines: string[] = [];
      for await (const ev of c.exec(
        {
          target: target("wander"),
          command: { program: { case: "argv", value: { args: ["echo", "one"] } } },
        },
        { headers: alice },
      ))
        if (ev.event.case === "output") lines.push(dec.decode(ev.event.value.data));
      expect(lines).toEqual(["one\n"]);
      serves1.delete("uid-wander");
      serves3.set("uid-wander", 2);
      kube.putSlice(dataplaneSlice(NS, "bash3", [{ uid: "pod-3", ip: "127.0.0.1", port: pod3.port }]));
      kube.putRun(
        sessionRun({
          namespace: NS,
          name: "wander",
          uid: "uid-wander",
          pod: "c",
          podUID: "pod-3",
          attempt: 2,
        }),
      );
      const moved: string[] = [];
      for await (const ev of c.exec(
        {
          target: target("wander"),
          command: { program: { case: "argv", value: { args: ["echo", "two"] } } },
        },
        { headers: alice },
      ))
        if (ev.event.case === "output") moved.push(dec.decode(ev.event.value.data));
      expect(moved).toEqual(["two\n"]);
      expect(pod3.calls.at(-1)).toMatchObject({
        method: "Exec",
        podUID: "pod-3",
        attempt: "2",
        caller: "alice",
      });
    } finally {
      pod3.stop();
    }
    const metrics = await (await fetch(`http://127.0.0.1:${gw.ports.metrics}/metrics`)).text();
    expect(metrics).toMatch(/method="ReadFile",protocol="connect",code="not_found"\} 1\n/);
  });

  test("a session moved to another pod is re-resolved once and called there", async () => {
    expect(
      (await client().stat({ target: target("moved"), path: "" }, { headers: alice })).info,
    ).toBeDefined();
    serves1.delete("uid-moved");
    serves2.set("uid-moved", 2);
    kube.putRun(
      sessionRun({
        namespace: NS,
        name: "moved",
        uid: "uid-moved",
        pod: "pod-b",
        podUID: "pod-2",
        attempt: 2,
      }),
    );
    const res = await client().stat({ target: target("moved"), path: "" }, { headers: alice });
    expect(res.info?.type).toBe(FileType.DIRECTORY);
    expect(pod2.calls.at(-1)).toMatchObject({ method: "Stat", podUID: "pod-2", attempt: "2" });
  });
});

describe("plain HTTP file routes", () => {
  const url = (path: string, base = http(), run = "box") =>
    `${base}/v1/namespaces/${NS}/runs/${run}/files/${path}`;

  test("PUT streams the body as chunked WriteFile calls with one upload; GET streams it back", async () => {
    const body = new Uint8Array(PUT_CHUNK_BYTES + 100 * 1024).map((_, i) => (i * 7) % 256);
    const before = pod1.writes.length;
    const put = await fetch(url("up/load.bin?parents=true"), { method: "PUT", body, headers: alice });
    expect(put.status).toBe(201);
    const info = (await put.json()) as { info: { size: string; path: string } };
    expect(info.info).toMatchObject({ path: "up/load.bin", size: String(body.byteLength) });
    const writes = pod1.writes.slice(before);
    expect(writes.map((w) => [w.offset, w.bytes, w.last])).toEqual([
      [0, PUT_CHUNK_BYTES, false],
      [PUT_CHUNK_BYTES, 100 * 1024, true],
    ]);
    expect(new Set(writes.map((w) => w.uploadId)).size).toBe(1);
    const get = await fetch(url("up/load.bin"), { headers: alice });
    expect(get.status).toBe(200);
    expect(get.headers.get("content-type")).toBe("application/octet-stream");
    expect(get.headers.get("x-kruntimes-file-size")).toBe(String(body.byteLength));
    expect(Buffer.from(await get.arrayBuffer()).equals(Buffer.from(body))).toBe(true);
    const range = await fetch(url("up/load.bin?offset=10&length=5"), { headers: alice });
    expect([...new Uint8Array(await range.arrayBuffer())]).toEqual([...body.subarray(10, 15)]);
  });

  test("an empty PUT commits an empty file; mode=append and mode=create", async () => {
    expect((await fetch(url("e.txt"), { method: "PUT", body: "", headers: alice })).status).toBe(201);
    expect(pod1.files.get("e.txt")?.byteLength).toBe(0);
    await fetch(url("e.txt?mode=append"), { method: "PUT", body: "ab", headers: alice });
    await fetch(url("e.txt?mode=append"), { method: "PUT", body: "cd", headers: alice });
    expect(dec.decode(pod1.files.get("e.txt"))).toBe("abcd");
    const exists = await fetch(url("e.txt?mode=create"), { method: "PUT", body: "x", headers: alice });
    expect(exists.status).toBe(409);
    expect(((await exists.json()) as { code: string }).code).toBe("already_exists");
    const bad = await fetch(url("e.txt?mode=sideways"), { method: "PUT", body: "x", headers: alice });
    expect(bad.status).toBe(400);
  });

  for (const [proto, base] of [
    ["http", http],
    ["https (node listener)", https],
  ] as const) {
    test(`${proto}: GET streams a file as it is read (the stand-in holds the rest until the first chunk arrived)`, async () => {
      pod1.files.set("gated", new Uint8Array(3 * 64 * 1024).fill(65));
      const res = await fetch(url("gated", base()), { headers: alice, tls: { ca: ca() } } as RequestInit);
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let got = 0;
      const first = await reader.read();
      got += first.value?.byteLength ?? 0;
      expect(got).toBeGreaterThan(0);
      pod1.release();
      for (let r = await reader.read(); !r.done; r = await reader.read()) got += r.value.byteLength;
      expect(got).toBe(3 * 64 * 1024);
    });
  }

  test("GET of a directory is one JSON page of its listing; page_token pages on", async () => {
    for (const n of ["b", "a", "c", "é", "d"]) pod1.files.set(`list/${n}`, enc.encode(n));
    const names: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const res = await fetch(url(`list?limit=2${token ? `&page_token=${token}` : ""}`), { headers: alice });
      expect(res.status).toBe(200);
      const page = (await res.json()) as {
        path: string;
        entries: { name: string; type: string }[];
        nextPageToken?: string;
      };
      expect(page.path).toBe("list");
      names.push(...page.entries.map((e) => e.name));
      expect(page.entries.every((e) => e.type === "FILE_TYPE_FILE")).toBe(true);
      token = page.nextPageToken ?? "";
      pages++;
    } while (token);
    expect(names).toEqual(["a", "b", "c", "d", "é"]);
    expect(pages).toBe(3);
    const root = (await (
      await fetch(`${http()}/v1/namespaces/${NS}/runs/box/files`, { headers: alice })
    ).json()) as {
      entries: { name: string }[];
    };
    expect(root.entries.map((e) => e.name)).toContain("list");
  });

  test.each([
    ["a missing file", "nope.txt", alice, 404, "not_found"],
    ["a path outside the workspace", "..%2Fsecret", alice, 403, "permission_denied"],
    ["no token", "e.txt", {}, 401, "unauthenticated"],
    [
      "a caller without runs/session",
      "e.txt",
      { authorization: "Bearer carol-token" },
      403,
      "permission_denied",
    ],
  ] as const)("GET %s → %p", async (_what, path, headers, status, code) => {
    const res = await fetch(url(path), { headers });
    expect(res.status).toBe(status);
    expect(((await res.json()) as { code: string }).code).toBe(code);
  });

  test("GET of a function Run is 409 with its mode; a PUT without a path is 400", async () => {
    const res = await fetch(url("x", http(), "fn"), { headers: alice });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { runNotReady: unknown }).runNotReady).toEqual({
      phase: "Ready",
      mode: "function",
    });
    const noPath = await fetch(`${http()}/v1/namespaces/${NS}/runs/box/files/`, {
      method: "PUT",
      body: "x",
      headers: alice,
    });
    expect(noPath.status).toBe(400);
  });
});

test("metrics by service/method/code, OpenAPI and the protoset name the session surface", async () => {
  const metrics = await (await fetch(`http://127.0.0.1:${gw.ports.metrics}/metrics`)).text();
  expect(metrics).toContain(
    'kruntimes_gateway_requests_total{service="kruntimes.gateway.v1.SessionService",method="Exec",protocol="grpc",code="ok"}',
  );
  expect(metrics).toContain(
    'kruntimes_gateway_requests_total{service="kruntimes.gateway.v1.SessionService",method="Exec",protocol="connect",code="resource_exhausted"}',
  );
  expect(metrics).toContain('method="Stat",protocol="http",code="not_found"');
  const doc = (await (await fetch(`${http()}/openapi.json`)).json()) as { paths: Record<string, object> };
  expect(Object.keys(doc.paths["/v1/namespaces/{namespace}/runs/{name}/files/{path}"] ?? {})).toEqual([
    "get",
    "put",
  ]);
  const set = dec.decode(new Uint8Array(await (await fetch(`${http()}/v1/protoset`)).arrayBuffer()));
  expect(set).toContain("kruntimes/gateway/v1/session.proto");
  expect(set).toContain("kruntimes/runtime/v1/session.proto");
});
