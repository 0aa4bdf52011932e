/** Starts the dashboard: assets, the caller resolver, metrics and the HTTP listener. */
import type { ClusterConnection } from "@kruntimes/kube";
import type { Logger } from "pino";
import { createApp } from "./app.ts";
import { type Assets, assetsFromDir, bundledAssets } from "./assets.ts";
import { createCallers } from "./callers.ts";
import { createMetrics } from "./metrics.ts";
import type { DashboardOptions } from "./options.ts";

/**
 * Tells the page how callers authenticate (a meta tag in index.html), so a view can open its
 * streams at once instead of waiting for the session check: in local mode there is no token.
 */
function withAuthMode(assets: Assets, auth: DashboardOptions["auth"]): Assets {
  const index = assets.get("/index.html");
  if (!index) return assets;
  const html = new TextDecoder()
    .decode(index.body)
    .replace("<head>", `<head><meta name="kruntimes-auth" content="${auth}" />`);
  return new Map(assets).set("/index.html", { ...index, body: new TextEncoder().encode(html) });
}

export interface Dashboard {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startDashboard(
  o: DashboardOptions,
  cluster: ClusterConnection,
  log: Logger,
  assets?: Assets,
): Promise<Dashboard> {
  const t0 = performance.now();
  const files = withAuthMode(
    assets ?? (o.assetsDir ? assetsFromDir(o.assetsDir) : await bundledAssets()),
    o.auth,
  );
  log.info({ files: files.size, ms: Math.round(performance.now() - t0) }, "web assets ready");
  const metrics = createMetrics();
  let allowedHosts: Set<string> | undefined;
  const app = createApp({
    callers: createCallers(o.auth, cluster),
    assets: files,
    metrics,
    log,
    gatewayNamespace: o.gatewayNamespace,
    get allowedHosts() {
      return allowedHosts;
    },
  });
  // Streams (watches, log follows) stay open; Bun's default idle timeout would cut them.
  app.listen({ hostname: o.host, port: o.port, idleTimeout: 0 });
  const port = app.server?.port ?? o.port;
  if (o.auth === "kubeconfig")
    allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${o.host}:${port}`]);
  const host = o.host === "0.0.0.0" ? "127.0.0.1" : o.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  log.info({ url, auth: o.auth, server: cluster.server }, "dashboard listening");
  return {
    url,
    port,
    stop: async () => {
      await app.stop(true);
    },
  };
}
