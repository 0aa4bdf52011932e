/**
 * The kubelet log endpoint, so `kubectl logs [-f] [--previous]` works through the apiserver:
 * GET /containerLogs/{namespace}/{pod}/{container} with follow, tailLines, previous, timestamps,
 * sinceSeconds and limitBytes. TLS with the node's serving certificate, bound to loopback, and
 * client certificates must chain to the cluster CA (the apiserver's kubelet-client identity).
 */
import { existsSync, readFileSync } from "node:fs";
import type { ContainerRunner } from "../pods/container-runner.ts";
import { streamLog } from "./cri-log-reader.ts";

export interface LogTarget {
  runner: ContainerRunner;
  live(): boolean;
}

export function startLogServer(opts: {
  port: number;
  certFile: string;
  keyFile: string;
  caFile: string;
  find(ns: string, pod: string, container: string): LogTarget | undefined;
}) {
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
    fetch(req) {
      const url = new URL(req.url);
      const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      if (req.method !== "GET" || !m) return new Response("not found", { status: 404 });
      const [, ns, pod, container] = m.map(decodeURIComponent) as [string, string, string, string];
      const t = opts.find(ns, pod, container);
      if (!t)
        return new Response(`container ${container} of pod ${ns}/${pod} is not on this node`, {
          status: 404,
        });
      const q = url.searchParams;
      const previous = q.get("previous") === "true";
      const restart = previous ? t.runner.restartCount - 1 : t.runner.restartCount;
      if (restart < 0) {
        return new Response(`previous terminated container "${container}" in pod "${pod}" not found`, {
          status: 400,
        });
      }
      const file = t.runner.logFile(restart);
      if (!existsSync(file)) return new Response("", { status: 200 });
      const num = (k: string) => (q.has(k) ? Number(q.get(k)) : undefined);
      const since = num("sinceSeconds");
      const follow = q.get("follow") === "true" && !previous;
      const gen = streamLog(
        file,
        {
          tailLines: num("tailLines"),
          sinceMs: since !== undefined ? Date.now() - since * 1000 : undefined,
          timestamps: q.get("timestamps") === "true",
          limitBytes: num("limitBytes"),
        },
        follow ? () => t.live() && restart === t.runner.restartCount : undefined,
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
    },
  });
}
