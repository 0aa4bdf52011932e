/**
 * The kubelet log endpoint, so `kubectl logs [-f] [--previous]` works through the apiserver:
 * GET /containerLogs/{namespace}/{pod}/{container} with follow, tailLines, previous, timestamps,
 * sinceSeconds/sinceTime and limitBytes. TLS with the node's serving certificate, bound to
 * loopback; a client certificate chaining to the cluster CA is required (Bun verifies the chain
 * but does not expose the peer's name, so there is no per-user authorization as in kubelet).
 */
import { readFileSync } from "node:fs";
import { streamLog } from "./cri-log-reader.ts";

export interface LogSource {
  /** Log files of the container's attempts, oldest first. */
  files(): string[];
  /** Whether `file` is still being written (follow ends when it is not). */
  live(file: string): boolean;
}

export interface LogServerOptions {
  port: number;
  certFile: string;
  keyFile: string;
  caFile: string;
  find(namespace: string, pod: string, container: string): LogSource | undefined;
}

const text = (body: string, status: number) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });

function handle(req: Request, opts: LogServerOptions): Response {
  const url = new URL(req.url);
  const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
  if (req.method !== "GET" || !m) return text("not found", 404);
  const [ns, pod, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
  const src = opts.find(ns, pod, container);
  const files = src?.files() ?? [];
  if (!src || files.length === 0)
    return text(`container "${container}" in pod "${pod}" has no logs on this node`, 404);
  const q = url.searchParams;
  const previous = q.get("previous") === "true";
  const file = previous ? files[files.length - 2] : files[files.length - 1];
  if (!file) return text(`previous terminated container "${container}" in pod "${pod}" not found`, 400);
  const num = (k: string) => (q.has(k) ? Number(q.get(k)) : undefined);
  const sinceSeconds = num("sinceSeconds");
  const sinceTime = q.get("sinceTime");
  const sinceMs =
    sinceSeconds !== undefined
      ? Date.now() - sinceSeconds * 1000
      : sinceTime
        ? Date.parse(sinceTime)
        : undefined;
  const follow = q.get("follow") === "true";
  const gen = streamLog(
    file,
    {
      tailLines: num("tailLines"),
      sinceMs,
      timestamps: q.get("timestamps") === "true",
      limitBytes: num("limitBytes"),
    },
    follow ? () => src.live(file) : undefined,
    req.signal,
  );
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      const { value, done } = await gen.next();
      if (done) ctrl.close();
      else ctrl.enqueue(enc.encode(value));
    },
    cancel() {
      void gen.return(undefined);
    },
  });
  return new Response(body, { headers: { "content-type": "text/plain; charset=utf-8" } });
}

export function startLogServer(opts: LogServerOptions): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port,
    tls: {
      cert: readFileSync(opts.certFile, "utf8"),
      key: readFileSync(opts.keyFile, "utf8"),
      ca: readFileSync(opts.caFile, "utf8"),
      requestCert: true,
      rejectUnauthorized: true,
    },
    // A followed log is a long response; Bun's default idle timeout would cut it.
    idleTimeout: 0,
    fetch: (req) => handle(req, opts),
  });
}
