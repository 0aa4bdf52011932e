/**
 * `krt mcp --http HOST:PORT`: the MCP Streamable HTTP transport on Bun.serve, at `/mcp`.
 *
 * Whoever can call this endpoint acts on the cluster with the credentials of the user who started
 * krt, so it is guarded like a local credential helper:
 * - Loopback only by default. Binding any other address needs `--allow-remote` and a bearer token
 *   (`--http-token-file`); without TLS (`--tls-cert`/`--tls-key`) krt warns that the token and all
 *   traffic go in clear text.
 * - On loopback, the Host header must name a loopback host and a browser's Origin must be a
 *   loopback origin: a web page cannot reach the endpoint through DNS rebinding or a cross-site
 *   request. A token, when given, is required on loopback too (other local users share loopback).
 * Each MCP session (the `Mcp-Session-Id` the client got from initialize) has its own MCP server
 * over the shared backend, so a client's cancellation reaches the call it cancels. Sessions end
 * with the client's DELETE or after two hours without a request; at most 100 are open (a new one
 * closes the one unused the longest).
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type HttpListen, isLoopback } from "./listen.ts";

export const MCP_PATH = "/mcp";

export interface HttpOptions extends HttpListen {
  /** Bearer token clients must send; required unless loopback. */
  token?: string;
  allowRemote: boolean;
  tls?: { cert: string; key: string };
  /** Largest POST body (a write_file's content travels in it). */
  maxBodyBytes: number;
  createServer: () => McpServer;
  log: (line: string) => void;
  /** MCP sessions open at once (default 100); a new one closes the one unused the longest. */
  maxSessions?: number;
  /** An MCP session without a request for this long is closed (default 2 h). */
  sessionIdleMs?: number;
}

export interface HttpServer {
  url: string;
  /** MCP sessions open now. */
  sessions(): number;
  stop(): Promise<void>;
}

interface McpSession {
  transport: WebStandardStreamableHTTPServerTransport;
  mcp: McpServer;
  seen: number;
}

export function serveHttp(o: HttpOptions): HttpServer {
  const loopback = isLoopback(o.host);
  const expected = o.token ? Buffer.from(`Bearer ${o.token}`) : undefined;
  const sessions = new Map<string, McpSession>();
  const maxSessions = o.maxSessions ?? 100;
  const idleMs = o.sessionIdleMs ?? 2 * 3600_000;
  const server = Bun.serve({
    hostname: o.host,
    port: o.port,
    // A call may take minutes; the SSE stream's keep-alive comments (every 15 s) keep it open.
    idleTimeout: 60,
    ...(o.tls ? { tls: o.tls } : {}),
    fetch: async (req) => {
      const url = new URL(req.url);
      if (url.pathname !== MCP_PATH) return text(404, `not found: the MCP endpoint is ${MCP_PATH}`);
      const refused = refuse(req, loopback, expected);
      if (refused) {
        o.log(
          `http: refused ${req.method} from ${req.headers.get("origin") ?? "no origin"}: ${refused.reason}`,
        );
        return refused.response;
      }
      const id = req.headers.get("mcp-session-id");
      if (id) {
        const known = sessions.get(id);
        // 404 tells the client to start a new MCP session (initialize again).
        if (!known)
          return text(404, `unknown MCP session "${id}" (ended, or idle too long): initialize again`);
        known.seen = Date.now();
        return known.transport.handleRequest(req);
      }
      if (req.method !== "POST") return text(400, "no MCP session: POST an initialize request first");
      // At the bound, the session unused the longest is closed: clients that never DELETE their
      // sessions (most) must not lock others out; the closed one's client gets 404 and starts over.
      if (sessions.size >= maxSessions) {
        const [oldest] = [...sessions.entries()].sort(([, a], [, b]) => a.seen - b.seen);
        if (oldest) {
          sessions.delete(oldest[0]);
          void oldest[1].mcp.close().catch(() => {});
        }
      }
      // A new MCP session; the transport refuses anything but initialize without a session ID.
      const mcp = o.createServer();
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            sessions.set(sid, { transport, mcp, seen: Date.now() });
          },
          onsessionclosed: (sid) => {
            sessions.delete(sid);
          },
          maxRequestBodySize: o.maxBodyBytes,
        });
      await mcp.connect(transport);
      return transport.handleRequest(req);
    },
  });
  // Sessions a client left without DELETE end after `idleMs` without a request; longer than the
  // longest call (an hour), so a session waiting on one is not ended under it.
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [sid, s] of sessions)
        if (now - s.seen > idleMs) {
          sessions.delete(sid);
          void s.mcp.close().catch(() => {});
        }
    },
    Math.min(60_000, idleMs),
  );
  sweep.unref();
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `${o.tls ? "https" : "http"}://${host}:${server.port}${MCP_PATH}`,
    sessions: () => sessions.size,
    async stop() {
      clearInterval(sweep);
      for (const s of sessions.values()) await s.mcp.close().catch(() => {});
      sessions.clear();
      await server.stop(true);
    },
  };
}

function refuse(
  req: Request,
  loopback: boolean,
  expected: Buffer | undefined,
): { response: Response; reason: string } | undefined {
  if (loopback) {
    const host = hostOf(req.headers.get("host") ?? "");
    if (!isLoopback(host))
      return { response: text(403, "forbidden: Host is not a loopback name"), reason: `Host ${host}` };
    const origin = req.headers.get("origin");
    if (origin && !loopbackOrigin(origin))
      return { response: text(403, "forbidden: cross-origin request"), reason: `Origin ${origin}` };
  }
  if (expected) {
    const got = Buffer.from(req.headers.get("authorization") ?? "");
    if (got.length !== expected.length || !timingSafeEqual(got, expected))
      return {
        response: text(401, "unauthorized: send Authorization: Bearer <token>", {
          "www-authenticate": 'Bearer realm="krt mcp"',
        }),
        reason: "no or wrong bearer token",
      };
  }
  return undefined;
}

function hostOf(hostHeader: string): string {
  const m = /^(\[[^\]]+\]|[^:]+)(:\d+)?$/.exec(hostHeader);
  return m ? (m[1] as string) : hostHeader;
}

function loopbackOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === "http:" || u.protocol === "https:") && isLoopback(u.hostname);
  } catch {
    return false;
  }
}

function text(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(`${body}\n`, { status, headers: { "content-type": "text/plain", ...headers } });
}
