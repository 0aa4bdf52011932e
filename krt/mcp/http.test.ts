/**
 * The Streamable HTTP transport's guard and plumbing, with the SDK's client on a stand-in backend:
 * who may listen where (loopback unless --allow-remote with a token), the bearer token, Host and
 * Origin checks against DNS rebinding and cross-site requests, TLS, and stateless serving.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { makeTestPki } from "../../gateway/testing/tls.ts";
import { CliError } from "../errors.ts";
import { type HttpServer, serveHttp } from "./http.ts";
import { DEFAULT_LIMITS } from "./limits.ts";
import { checkHttpOptions, isLoopback, parseListen } from "./listen.ts";
import { createMcpServer } from "./server.ts";
import { FakeBackend } from "./testing/fake-backend.ts";

const TOKEN = "t0ken-for-tests";
const logs: string[] = [];
const backend = new FakeBackend(DEFAULT_LIMITS);
const createServer = () =>
  createMcpServer({ backend, limits: DEFAULT_LIMITS, version: "test", log: (l) => logs.push(l) });

describe("options", () => {
  test("parseListen: HOST:PORT, IPv6 in brackets, port 0", () => {
    expect(parseListen("127.0.0.1:8765")).toEqual({ host: "127.0.0.1", port: 8765 });
    expect(parseListen("[::1]:0")).toEqual({ host: "::1", port: 0 });
    expect(parseListen("localhost:9")).toEqual({ host: "localhost", port: 9 });
    for (const bad of ["8765", "127.0.0.1", "127.0.0.1:99999", ":80", "::1:80"])
      expect(() => parseListen(bad)).toThrow(CliError);
  });

  test("isLoopback", () => {
    for (const h of ["127.0.0.1", "127.3.2.1", "localhost", "::1", "[::1]", "LOCALHOST"])
      expect(isLoopback(h)).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "example.com", "127.0.0.1.example.com"])
      expect(isLoopback(h)).toBe(false);
  });

  test("beyond loopback: refused without --allow-remote, then without a token; warned without TLS", () => {
    expect(checkHttpOptions({ host: "127.0.0.1", allowRemote: false, tls: false })).toEqual({ warnings: [] });
    expect(() => checkHttpOptions({ host: "0.0.0.0", allowRemote: false, tls: false })).toThrow(
      /loopback only/,
    );
    expect(() => checkHttpOptions({ host: "0.0.0.0", allowRemote: true, tls: false })).toThrow(
      /bearer token/,
    );
    const plain = checkHttpOptions({ host: "0.0.0.0", allowRemote: true, token: "x", tls: false });
    expect(plain.warnings[0]).toContain("unencrypted");
    expect(checkHttpOptions({ host: "0.0.0.0", allowRemote: true, token: "x", tls: true })).toEqual({
      warnings: [],
    });
  });
});

async function connect(url: string, headers: Record<string, string> = {}, fetchImpl?: typeof fetch) {
  const client = new Client({ name: "unit-http", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
      ...(fetchImpl ? { fetch: fetchImpl } : {}),
    }),
  );
  return client;
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const post = (url: string, headers: Record<string, string>, init: RequestInit = {}) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(initialize),
    ...init,
  });

describe("serving on loopback with a token", () => {
  let server: HttpServer;
  beforeAll(() => {
    server = serveHttp({
      host: "127.0.0.1",
      port: 0,
      token: TOKEN,
      allowRemote: false,
      maxBodyBytes: 1024 * 1024,
      createServer,
      log: (l) => logs.push(l),
    });
  });
  afterAll(() => server.stop());

  test("the SDK's client lists and calls tools with the bearer token; each client has its own MCP session over one backend", async () => {
    const a = await connect(server.url, { authorization: `Bearer ${TOKEN}` });
    const b = await connect(server.url, { authorization: `Bearer ${TOKEN}` });
    expect(server.sessions()).toBe(2);
    expect((await a.listTools()).tools.length).toBe(8);
    const created = (await a.callTool({ name: "create_session", arguments: { name: "h1" } })) as unknown as {
      structuredContent: { session: string };
    };
    expect(created.structuredContent.session).toBe("h1");
    // Another MCP session reaches the same backend, so the same kruntimes session.
    const r = (await b.callTool({
      name: "exec",
      arguments: { session: "h1", command: "echo hi" },
    })) as unknown as { structuredContent: { stdout: string } };
    expect(r.structuredContent.stdout).toBe("echo hi\n");
    // A client that ends its MCP session (DELETE) frees it.
    await (a.transport as StreamableHTTPClientTransport).terminateSession();
    expect(server.sessions()).toBe(1);
    await a.close();
    await b.close();
  });

  test("a call the client cancels is cancelled in the server (the cancellation reaches its MCP session)", async () => {
    const c = await connect(server.url, { authorization: `Bearer ${TOKEN}` });
    await c.callTool({ name: "create_session", arguments: { name: "h2" } });
    const abort = new AbortController();
    const call = c.callTool({ name: "exec", arguments: { session: "h2", command: "sleep 10" } }, undefined, {
      signal: abort.signal,
    });
    await Bun.sleep(200);
    abort.abort();
    await expect(call).rejects.toThrow();
    for (let i = 0; i < 100 && !backend.aborted.includes("h2"); i++) await Bun.sleep(10);
    expect(backend.aborted).toContain("h2");
    await c.close();
  });

  test("no token or a wrong one: 401 with WWW-Authenticate, and nothing reaches the backend", async () => {
    const calls = backend.calls.length;
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const res = await post(server.url, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
    }
    await expect(connect(server.url)).rejects.toThrow();
    expect(backend.calls.length).toBe(calls);
    expect(logs.some((l) => l.includes("no or wrong bearer token"))).toBe(true);
  });

  test("a foreign Host (DNS rebinding) or a foreign Origin (a web page) is refused even with the token", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await post(server.url, { ...auth, host: "attacker.example:80" })).status).toBe(403);
    expect((await post(server.url, { ...auth, origin: "https://attacker.example" })).status).toBe(403);
    expect((await post(server.url, { ...auth, origin: "http://localhost:3000" })).status).toBe(200);
    expect(logs.some((l) => l.includes("Host attacker.example"))).toBe(true);
    expect(logs.some((l) => l.includes("Origin https://attacker.example"))).toBe(true);
  });

  test("requests outside an MCP session: GET is 400, an unknown session 404, another path 404", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await fetch(server.url, { headers: { ...auth, accept: "text/event-stream" } })).status).toBe(400);
    const unknown = await post(server.url, { ...auth, "mcp-session-id": "no-such-session" });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("initialize again");
    expect((await post(server.url.replace("/mcp", "/other"), auth)).status).toBe(404);
  });
});

test("MCP sessions are bounded: the one unused the longest is closed, and idle ones end", async () => {
  const server = serveHttp({
    host: "127.0.0.1",
    port: 0,
    allowRemote: false,
    maxBodyBytes: 1024 * 1024,
    createServer,
    log: () => {},
    maxSessions: 2,
    // Long enough that a loaded machine cannot idle a session out between two calls of the test.
    sessionIdleMs: 3000,
  });
  try {
    const first = await connect(server.url);
    const second = await connect(server.url);
    await second.listTools();
    const third = await connect(server.url);
    expect(server.sessions()).toBe(2);
    // The first client's session was closed for the third: the server answers it 404.
    await expect(first.listTools()).rejects.toThrow();
    expect((await third.listTools()).tools.length).toBe(8);
    const deadline = Date.now() + 20_000;
    while (server.sessions() > 0 && Date.now() < deadline) await Bun.sleep(100);
    expect(server.sessions()).toBe(0);
    for (const c of [first, second, third]) await c.close();
  } finally {
    await server.stop();
  }
}, 30_000);

test("loopback without a token is served; TLS when given a certificate", async () => {
  const pki = makeTestPki({ dns: ["localhost"], ips: ["127.0.0.1"] });
  const server = serveHttp({
    host: "127.0.0.1",
    port: 0,
    allowRemote: false,
    tls: { cert: readFileSync(pki.certFile, "utf8"), key: readFileSync(pki.keyFile, "utf8") },
    maxBodyBytes: 1024 * 1024,
    createServer,
    log: () => {},
  });
  try {
    expect(server.url).toStartWith("https://127.0.0.1:");
    const ca = readFileSync(pki.caFile, "utf8");
    const tlsFetch = ((input: string | URL | Request, init?: RequestInit) =>
      fetch(input, { ...init, tls: { ca } } as RequestInit)) as typeof fetch;
    const client = await connect(server.url, {}, tlsFetch);
    expect((await client.listTools()).tools.length).toBe(8);
    await client.close();
  } finally {
    await server.stop();
  }
});
