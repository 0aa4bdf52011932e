/**
 * The gateway given bad input, in its own process on loopback with every listener up (HTTP/1.1
 * on Bun.serve, h2c and TLS on node:http2; gateway/testing/standin-gateway.ts): malformed Connect,
 * gRPC and gRPC-Web frames, wrong content types, invalid UTF-8, huge headers and bodies, slow and
 * silent clients. Each must get a clean error code (or a closed connection), the gateway's RSS
 * must stay bounded, and it must keep serving a good call on every listener afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { join } from "node:path";
import tls from "node:tls";
import { makeTestPki, type TestPki } from "./testing/tls.ts";

const NS = "team";
const AUTH = "Bearer alice-token";
const INVOKE_RPC = "/kruntimes.gateway.v1.FunctionService/Invoke";
/** --idle-timeout of the gateway under test. */
const IDLE_MS = 1000;
/** Bun closes a connection whose HTTP/1.1 headers are not complete after about 10 s (not configurable). */
const BUN_HEADER_TIMEOUT_MS = 10_000;
let pki: TestPki;
let proc: ReturnType<typeof Bun.spawn>;
const gw = { ports: {} as { http?: number; grpc?: number; https?: number; metrics?: number } };
const caPem = () => readFileSync(pki.caFile, "utf8");

beforeAll(async () => {
  pki = makeTestPki();
  proc = Bun.spawn(
    [
      "bun",
      join(import.meta.dir, "testing", "standin-gateway.ts"),
      pki.certFile,
      pki.keyFile,
      "--max-request-bytes=1Mi",
      `--idle-timeout=${IDLE_MS}ms`,
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the stand-in gateway exited before printing its ports");
    text += new TextDecoder().decode(value);
  }
  gw.ports = JSON.parse(text.split("\n")[0]!);
}, 30_000);

afterAll(() => {
  proc?.kill();
});

/** The gateway's resident memory, from /proc. */
function gatewayRss(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}

const httpUrl = () => `http://127.0.0.1:${gw.ports.http}`;

/** A good Connect JSON call over HTTP/1.1: what must keep working after each bad one. */
async function goodHttp1(): Promise<void> {
  const res = await fetch(`${httpUrl()}/v1/namespaces/${NS}/runs/echo/invoke`, {
    method: "POST",
    body: "ok",
    headers: { authorization: AUTH, "content-type": "text/plain" },
  });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe("ok");
}

/** One request on a fresh HTTP/2 session (h2c or TLS); resolves with status, headers and body. */
function h2(
  port: number,
  secure: boolean,
  headers: http2.OutgoingHttpHeaders,
  body?: Uint8Array | string,
): Promise<{
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`${secure ? "https" : "http"}://127.0.0.1:${port}`, {
      ca: secure ? caPem() : undefined,
      servername: "localhost",
    });
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ...headers });
    let status = 0;
    let got: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => {
      status = Number(h[":status"]);
      got = h;
    });
    req.on("trailers", (t) => {
      trailers = t;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      resolve({ status, headers: got, trailers, body: Buffer.concat(chunks) });
    });
    req.on("error", (e) => {
      session.destroy();
      reject(e);
    });
    req.end(body);
  });
}

async function goodGrpc(secure: boolean): Promise<void> {
  const r = await h2(
    secure ? gw.ports.https! : gw.ports.grpc!,
    secure,
    { ":path": `/v1/namespaces/${NS}/runs/echo/invoke`, authorization: AUTH, "content-type": "text/plain" },
    "ok",
  );
  expect(r.status).toBe(200);
  expect(r.body.toString()).toBe("ok");
}

/** The gateway still answers a good call on every listener. */
async function stillServing(): Promise<void> {
  await goodHttp1();
  await goodGrpc(false);
  await goodGrpc(true);
}

/** A gRPC length-prefixed frame: flags, a 4-byte big-endian length, then the payload. */
function frame(payload: Uint8Array, o: { flags?: number; length?: number } = {}): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = o.flags ?? 0;
  new DataView(out.buffer).setUint32(1, o.length ?? payload.length);
  out.set(payload, 5);
  return out;
}

/** Raw bytes on a fresh TCP (or TLS) connection; resolves with what came back once it closes or `waitMs` passes. */
function raw(port: number, bytes: Uint8Array | string, o: { secure?: boolean; waitMs?: number } = {}) {
  return new Promise<{ reply: string; closed: boolean }>((resolve) => {
    const chunks: Buffer[] = [];
    const sock = o.secure
      ? tls.connect({
          host: "127.0.0.1",
          port,
          ca: caPem(),
          servername: "localhost",
          ALPNProtocols: ["http/1.1"],
        })
      : net.connect({ host: "127.0.0.1", port });
    const done = (closed: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ reply: Buffer.concat(chunks).toString("latin1"), closed });
    };
    const timer = setTimeout(() => done(false), o.waitMs ?? 3000);
    sock.on(o.secure ? "secureConnect" : "connect", () => sock.write(bytes));
    sock.on("data", (c: Buffer) => chunks.push(c));
    sock.on("close", () => done(true));
    sock.on("error", () => done(true));
  });
}

const status = (reply: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0);

describe("Connect and the plain route over HTTP/1.1", () => {
  const connectJson = (body: string | Uint8Array, contentType = "application/json") =>
    fetch(`${httpUrl()}${INVOKE_RPC}`, {
      method: "POST",
      body,
      headers: { authorization: AUTH, "content-type": contentType, "connect-protocol-version": "1" },
    });

  test("malformed JSON is invalid_argument (400), with a Connect error body", async () => {
    const res = await connectJson("{not json");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
    await stillServing();
  });

  test("JSON that is not the request message is invalid_argument (400)", async () => {
    const res = await connectJson('{"namespace": 7, "nosuchfield": true}');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
  });

  test("invalid UTF-8 in a JSON body is invalid_argument (400)", async () => {
    const res = await connectJson(
      new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
  });

  test("bytes that are not protobuf are internal (500) with a parse message, as connect and grpc-go answer", async () => {
    const res = await connectJson(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), "application/proto");
    expect(res.status).toBe(500);
    const err = (await res.json()) as { code: string; message: string };
    expect(err.code).toBe("internal");
    expect(err.message).toStartWith("parse binary: ");
    await stillServing();
  });

  test("a content type that is no Connect codec is 415", async () => {
    const res = await connectJson("<xml/>", "text/xml");
    expect(res.status).toBe(415);
    await stillServing();
  });

  test("a truncated gRPC-Web frame is an error, not a hang", async () => {
    const res = await fetch(`${httpUrl()}${INVOKE_RPC}`, {
      method: "POST",
      body: frame(new Uint8Array(10), { length: 1000 }),
      headers: { authorization: AUTH, "content-type": "application/grpc-web+proto" },
      signal: AbortSignal.timeout(5000),
    });
    expect(res.status).toBe(200); // gRPC-Web reports errors in the grpc-status header or trailer frame
    const grpcStatus = res.headers.get("grpc-status") ?? /grpc-status:\s*(\d+)/.exec(await res.text())?.[1];
    expect(grpcStatus).toBe("3"); // INVALID_ARGUMENT
  });

  test("a body over --max-request-bytes is refused with 413 and the memory stays bounded", async () => {
    const before = gatewayRss();
    const big = new Uint8Array(64 * 1024 * 1024);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${httpUrl()}/v1/namespaces/${NS}/runs/echo/invoke`, {
        method: "POST",
        body: big,
        headers: { authorization: AUTH, "content-type": "application/octet-stream" },
      }).catch((e: Error) => e);
      if (res instanceof Response) expect(res.status).toBe(413);
    }
    // Refused at the listener (Bun's maxRequestBodySize) without buffering 4 × 64 MiB.
    expect(gatewayRss() - before).toBeLessThan(48 * 1024 * 1024);
    await stillServing();
  });

  test("huge headers are refused (431) without reaching the handler", async () => {
    const r = await raw(
      gw.ports.http!,
      `POST /v1/namespaces/${NS}/runs/echo/invoke HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nX-Big: ${"a".repeat(256 * 1024)}\r\nContent-Length: 2\r\n\r\nok`,
    );
    expect([431, 400]).toContain(status(r.reply));
    await stillServing();
  });

  test("invalid UTF-8 in the path is a clean 4xx", async () => {
    const r = await raw(
      gw.ports.http!,
      Buffer.from(
        `POST /v1/namespaces/\xff\xfe/runs/echo/invoke HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 0\r\n\r\n`,
        "latin1",
      ),
    );
    expect(status(r.reply)).toBeGreaterThanOrEqual(400);
    expect(status(r.reply)).toBeLessThan(500);
    await stillServing();
  });

  test("control bytes in the request line are refused by the parser and the connection closed", async () => {
    const r = await raw(gw.ports.http!, Buffer.from("POST /v1/\x01 HTTP/1.1\r\nHost: x\r\n\r\n", "latin1"));
    expect([400, 505]).toContain(status(r.reply));
    expect(r.closed).toBe(true);
    await stillServing();
  });

  test("invalid UTF-8 in a header value reaches no handler as garbage: a clean 4xx", async () => {
    const r = await raw(
      gw.ports.http!,
      Buffer.from(
        `POST /v1/namespaces/${NS}/runs/echo/invoke HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\nContent-Length: 0\r\n\r\n`,
        "latin1",
      ),
    );
    expect(status(r.reply)).toBeGreaterThanOrEqual(400);
    expect(status(r.reply)).toBeLessThan(500);
  });
});

describe("gRPC over HTTP/2 (h2c and TLS)", () => {
  for (const secure of [false, true]) {
    const port = () => (secure ? gw.ports.https! : gw.ports.grpc!);
    const grpc = (body: Uint8Array, extra: http2.OutgoingHttpHeaders = {}) =>
      h2(
        port(),
        secure,
        {
          ":path": INVOKE_RPC,
          "content-type": "application/grpc",
          te: "trailers",
          authorization: AUTH,
          ...extra,
        },
        body,
      );
    const grpcStatus = (r: Awaited<ReturnType<typeof grpc>>) =>
      r.trailers["grpc-status"] ?? r.headers["grpc-status"];
    const label = secure ? "TLS" : "h2c";

    test(`${label}: a frame shorter than its length prefix is INVALID_ARGUMENT`, async () => {
      const r = await grpc(frame(new Uint8Array(3), { length: 100 }));
      expect(grpcStatus(r)).toBe("3");
    });

    test(`${label}: a length prefix of 4 GiB is refused without allocating it`, async () => {
      const r = await grpc(frame(new Uint8Array(8), { length: 0xffffffff }));
      expect(["3", "8"]).toContain(String(grpcStatus(r)));
    });

    test(`${label}: a compressed frame without grpc-encoding is INTERNAL or INVALID_ARGUMENT`, async () => {
      const r = await grpc(frame(new Uint8Array([1, 2, 3]), { flags: 1 }));
      expect(["3", "13", "12"]).toContain(String(grpcStatus(r)));
    });

    test(`${label}: garbage protobuf is INTERNAL "parse binary", the same answer as the Connect route`, async () => {
      const r = await grpc(frame(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f])));
      expect(grpcStatus(r)).toBe("13");
      expect(decodeURIComponent(String(r.trailers["grpc-message"]))).toStartWith("parse binary: ");
    });

    test(`${label}: two messages on a unary call are refused`, async () => {
      const one = frame(new Uint8Array(0));
      const r = await grpc(new Uint8Array([...one, ...one]));
      expect(["3", "12"]).toContain(String(grpcStatus(r)));
    });

    test(`${label}: an unknown gRPC content subtype is refused`, async () => {
      const r = await grpc(frame(new Uint8Array(0)), { "content-type": "application/grpc+thrift" });
      expect(r.status === 415 || ["3", "12"].includes(String(grpcStatus(r)))).toBe(true);
      await stillServing();
    });

    test(`${label}: 1,000 headers are refused and the session survives or closes cleanly`, async () => {
      const many: http2.OutgoingHttpHeaders = {};
      for (let i = 0; i < 1000; i++) many[`x-h${i}`] = "v".repeat(100);
      const r = await grpc(frame(new Uint8Array(0)), many).catch((e: Error) => e);
      if (!(r instanceof Error)) expect(r.status === 431 || grpcStatus(r) !== "0").toBe(true);
      await stillServing();
    });
  }

  test("HTTP/1.1 bytes on the h2c port close the connection; the port keeps serving", async () => {
    const r = await raw(gw.ports.grpc!, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(r.closed).toBe(true);
    await stillServing();
  });

  test("bytes that are not a TLS handshake close the connection on the TLS port", async () => {
    const r = await raw(gw.ports.https!, "\x16\x03\x01\x00\x05garbage-that-is-not-tls\r\n\r\n");
    expect(r.closed).toBe(true);
    await stillServing();
  });
});

describe("slow and silent clients", () => {
  const slow = (port: number, bytes: string, waitMs: number, secure = false) =>
    Array.from({ length: 50 }, () => raw(port, bytes, { waitMs, secure }));

  test("HTTP/2: silent connections, half a preface and sessions with no stream are closed after --idle-timeout; others are served meanwhile", async () => {
    const groups = {
      "h2c, nothing sent": slow(gw.ports.grpc!, "", IDLE_MS * 15),
      "h2c, half a preface": slow(gw.ports.grpc!, "PRI * HTTP/2.0\r\n", IDLE_MS * 15),
      "h2c, preface and SETTINGS, no stream": slow(
        gw.ports.grpc!,
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00",
        IDLE_MS * 15,
      ),
      "TLS handshake done, nothing sent": slow(gw.ports.https!, "", IDLE_MS * 15, true),
    };
    const started = performance.now();
    await stillServing();
    // 200 connections (50 TLS handshakes) arrive at once on 2 cores: served within seconds, not after them.
    expect(performance.now() - started).toBeLessThan(10_000);
    const open: Record<string, number> = {};
    for (const [name, held] of Object.entries(groups))
      open[name] = (await Promise.all(held)).filter((r) => !r.closed).length;
    expect(open).toEqual(Object.fromEntries(Object.keys(groups).map((k) => [k, 0])));
  }, 30_000);

  test("a call longer than --idle-timeout, with no byte on the wire, is not cut (h2c, TLS h2, TLS HTTP/1.1)", async () => {
    const body = `sleep:${IDLE_MS * 2.5}`;
    const path = `/v1/namespaces/${NS}/runs/echo/invoke`;
    const headers = { ":path": path, authorization: AUTH, "content-type": "text/plain" };
    const [plain, secure, http1] = await Promise.all([
      h2(gw.ports.grpc!, false, headers, body),
      h2(gw.ports.https!, true, headers, body),
      fetch(`https://localhost:${gw.ports.https}${path}`, {
        method: "POST",
        body,
        headers: { authorization: AUTH, "content-type": "text/plain" },
        tls: { ca: caPem() },
      } as RequestInit),
    ]);
    expect([plain.status, secure.status, http1.status]).toEqual([200, 200, 200]);
  }, 30_000);

  test("TLS: a client that never sends a ClientHello is closed after --idle-timeout", async () => {
    const r = await raw(gw.ports.https!, "", { waitMs: IDLE_MS * 15 });
    expect(r.closed).toBe(true);
  }, 30_000);

  test(
    "HTTP/1.1: connections that never finish their headers are closed (Bun's header timeout), others are served meanwhile",
    async () => {
      const held = slow(
        gw.ports.http!,
        "POST /v1/namespaces/team/runs/echo/invoke HTTP/1.1\r\nHost: x\r\n",
        BUN_HEADER_TIMEOUT_MS + 5000,
      );
      await Bun.sleep(200);
      await stillServing();
      const results = await Promise.all(held);
      expect(results.filter((r) => !r.closed).length).toBe(0);
    },
    BUN_HEADER_TIMEOUT_MS + 15_000,
  );

  test("the gateway's memory after every test above is bounded", () => {
    expect(gatewayRss()).toBeLessThan(400 * 1024 * 1024);
  });
});
