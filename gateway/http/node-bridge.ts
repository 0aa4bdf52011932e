/**
 * A node:http / node:http2 request handed to a fetch-style handler (the Elysia app): the body is
 * read whole, bounded (larger → 413), and the Response streamed back as its body produces it. Only the non-RPC routes take
 * this path; RPCs go through connectNodeAdapter directly.
 */
import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

type NodeRequest = IncomingMessage | Http2ServerRequest;
/** What both node:http and node:http2 responses offer (their union has no callable writeHead). */
interface NodeResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers?: Record<string, string>): unknown;
  end(data?: string | Uint8Array): unknown;
  write(data: Uint8Array): boolean;
  once(event: "drain", f: () => void): unknown;
}

async function readBody(req: NodeRequest, max: number): Promise<Uint8Array | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > max) return "too-large";
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

export function nodeToFetch(
  handle: (request: Request) => Response | Promise<Response>,
  scheme: "http" | "https",
  maxBodyBytes: number,
) {
  return async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    try {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (k.startsWith(":") || v === undefined) continue;
        headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      }
      const authority = (req.headers[":authority"] as string | undefined) ?? req.headers.host ?? "localhost";
      const method = req.method ?? "GET";
      let body: Uint8Array | undefined;
      if (method !== "GET" && method !== "HEAD") {
        const read = await readBody(req, maxBodyBytes);
        if (read === "too-large") {
          res.writeHead(413, { "content-type": "text/plain" });
          res.end(`request body above ${maxBodyBytes} bytes\n`);
          return;
        }
        body = read;
      }
      const response = await handle(
        new Request(`${scheme}://${authority}${req.url}`, { method, headers, body }),
      );
      const out: Record<string, string> = {};
      response.headers.forEach((v, k) => {
        out[k] = v;
      });
      res.writeHead(response.status, out);
      if (!response.body) {
        res.end();
        return;
      }
      // Streamed as produced (session file downloads), waiting for the socket to drain.
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (!res.write(chunk)) await new Promise<void>((resolve) => res.once("drain", () => resolve()));
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  };
}
