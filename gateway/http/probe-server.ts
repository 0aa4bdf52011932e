/** The gateway's operational endpoints on --metrics-port: `/metrics`, `/healthz`, `/readyz`. */
import type { Registry } from "prom-client";

export interface ProbeServerOptions {
  host: string;
  port: number;
  registry: Registry;
  /** Ready = routes synced, listeners up, not shutting down. */
  ready(): boolean;
  describe(): Record<string, unknown>;
}

export function serveProbes(o: ProbeServerOptions): { port: number; stop(): void } {
  const server = Bun.serve({
    hostname: o.host,
    port: o.port,
    async fetch(req) {
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/metrics":
          return new Response(await o.registry.metrics(), {
            headers: { "content-type": o.registry.contentType },
          });
        case "/healthz":
          return new Response("ok\n");
        case "/readyz": {
          const ready = o.ready();
          return new Response(`${JSON.stringify({ ready, ...o.describe() })}\n`, {
            status: ready ? 200 : 503,
            headers: { "content-type": "application/json" },
          });
        }
        default:
          return new Response("not found\n", { status: 404 });
      }
    },
  });
  return { port: server.port ?? o.port, stop: () => server.stop(true) };
}
