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
 * Stateless: each POST gets a fresh MCP server over the shared backend, so nothing piles up per
 * client and any client may call at any time; there is no server-initiated stream (GET is 405).
 */
import { timingSafeEqual } from "node:crypto";
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
}

export interface HttpServer {
  url: string;
  stop(): Promise<void>;
}

export function serveHttp(o: HttpOptions): HttpServer {
  const loopback = isLoopback(o.host);
  const expected = o.token ? Buffer.from(`Bearer ${o.token}`) : undefined;
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
      if (req.method !== "POST")
        return text(405, "this server is stateless: send JSON-RPC with POST", { allow: "POST" });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        maxRequestBodySize: o.maxBodyBytes,
      });
      const mcp = o.createServer();
      await mcp.connect(transport);
      return transport.handleRequest(req);
    },
  });
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `${o.tls ? "https" : "http"}://${host}:${server.port}${MCP_PATH}`,
    stop: () => server.stop(true),
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
