/**
 * runtimed's HTTP endpoints on `$POD_IP:$KRT_PORT`: `/healthz` (the process serves), `/readyz`
 * (200 only when Runs can execute here: the Runtime Server answers Health SERVING, the Run watch
 * has synced, the heartbeat Lease is held and runtimed is not shutting down; the body says what is
 * missing) and `/metrics` (Prometheus).
 */
import { ServingStatus } from "@kruntimes/api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import type { Registry } from "prom-client";
import type { RuntimeServerClients } from "../runtime-server/client.ts";

export interface ReadinessSources {
  server: RuntimeServerClients;
  watchSynced(): boolean;
  leaseHeld(): boolean;
  draining(): boolean;
}

async function notReady(s: ReadinessSources): Promise<string[]> {
  const missing: string[] = [];
  if (s.draining()) missing.push("shutting down");
  if (!s.watchSynced()) missing.push("Run watch not synced");
  if (!s.leaseHeld()) missing.push("heartbeat Lease not held");
  try {
    const h = await s.server.runtime.health({}, { timeoutMs: 1000 });
    if (h.status !== ServingStatus.SERVING) missing.push(`Runtime Server ${ServingStatus[h.status]}`);
  } catch (e) {
    missing.push(`Runtime Server unreachable: ${e instanceof Error ? e.message : e}`);
  }
  return missing;
}

export function serveProbes(host: string, port: number, registry: Registry, s: ReadinessSources) {
  return Bun.serve({
    hostname: host,
    port,
    async fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname === "/healthz") return new Response("ok\n");
      if (pathname === "/readyz") {
        const missing = await notReady(s);
        return missing.length === 0
          ? new Response("ok\n")
          : new Response(`not ready: ${missing.join("; ")}\n`, { status: 503 });
      }
      if (pathname === "/metrics")
        return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
      return new Response("not found\n", { status: 404 });
    },
  });
}
