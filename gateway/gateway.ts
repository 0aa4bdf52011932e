/**
 * The gateway assembled: routes (informers), authorizer, dataplane client and invoker, then the
 * listeners the options ask for — Elysia on Bun.serve (--http-port), h2c (--grpc-port) and TLS
 * (--https-port) — and the probe server. `startGateway` is what main.ts runs and what tests and
 * benchmarks start in-process.
 */
import type { KubeClient } from "@kruntimes/kube";
import type { Logger } from "pino";
import { Authorizer, kubeReviewer, type Reviewer } from "./auth/authorizer.ts";
import { functionServiceRoutes } from "./connect/function-service.ts";
import { type Listener, serveH2c, serveTls } from "./connect/node-listeners.ts";
import { fetchHandlers, readMaxBytes, routerOptions } from "./connect/router.ts";
import { DataplaneClient } from "./dataplane/dataplane-client.ts";
import { TokenSource } from "./dataplane/token-source.ts";
import { createApp } from "./http/app.ts";
import { bareHandler } from "./http/bare-handler.ts";
import { serveProbes } from "./http/probe-server.ts";
import { Invoker } from "./invoke/invoker.ts";
import { ConcurrencyLimit } from "./limits/concurrency.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import type { GatewayOptions } from "./options.ts";
import pkg from "./package.json" with { type: "json" };
import { RouteTable } from "./routing/route-table.ts";
import { SessionDataplane } from "./session/session-client.ts";
import { SessionGateway } from "./session/session-gateway.ts";
import { sessionServiceRoutes } from "./session/session-service.ts";

export interface GatewayPorts {
  http?: number;
  grpc?: number;
  https?: number;
  metrics: number;
}

export interface Gateway {
  ports: GatewayPorts;
  metrics: Metrics;
  routes: RouteTable;
  /** Stop taking calls (readyz fails), let in-flight ones finish up to `graceMs`, close everything. */
  stop(graceMs?: number): Promise<void>;
}

export interface GatewayDeps {
  client: KubeClient;
  log: Logger;
  /** Replaces the apiserver reviews (benchmarks of the gateway alone). */
  reviewer?: Reviewer;
  /** The --http-port surface: Elysia (default) or hand-matched routes on plain Bun.serve (benchmark baseline). */
  httpSurface?: "elysia" | "bun";
  /** gRPC Invoke through connect-node's adapter instead of the unary path (benchmark comparison). */
  grpcThroughAdapter?: boolean;
}

export async function startGateway(o: GatewayOptions, d: GatewayDeps): Promise<Gateway> {
  const metrics = createMetrics();
  const routes = new RouteTable(d.client, {
    namespace: o.namespace,
    onError: (what, err) => d.log.warn({ err, what }, "watch failed; retrying"),
  }).start();
  const limit = new ConcurrencyLimit(o.maxConcurrentRequests);
  const authorizer = new Authorizer(
    d.reviewer ?? kubeReviewer(d.client),
    { allowTtlMs: o.authCacheTtlMs, denyTtlMs: o.authDenyTtlMs, maxSize: o.authCacheSize },
    {
      cacheHit: () => metrics.authCache.inc({ result: "hit" }),
      cacheMiss: () => metrics.authCache.inc({ result: "miss" }),
    },
  );
  const invoker = new Invoker({
    limit,
    authorizer,
    routes,
    dataplane: new DataplaneClient(new TokenSource(o.dataplaneTokenFile)),
    metrics,
    log: d.log,
    maxRequestBytes: o.maxRequestBytes,
    maxResponseBytes: o.maxResponseBytes,
    deadline: { defaultTimeoutMs: o.defaultTimeoutMs, maxTimeoutMs: o.maxTimeoutMs },
  });
  const sessions = new SessionGateway({
    limit,
    authorizer,
    routes,
    dataplane: new SessionDataplane(new TokenSource(o.dataplaneTokenFile)),
    metrics,
    log: d.log,
    maxRequestBytes: o.maxRequestBytes,
    maxResponseBytes: o.maxResponseBytes,
    maxTimeoutMs: o.maxTimeoutMs,
  });
  const functionRoutes = functionServiceRoutes(invoker);
  const sessionRoutes = sessionServiceRoutes(sessions);
  const connectRoutes = (r: Parameters<typeof functionRoutes>[0]) => {
    functionRoutes(r);
    sessionRoutes(r);
  };
  const rOpts = routerOptions(o.maxRequestBytes);
  const rpc = fetchHandlers(connectRoutes, rOpts);
  const app = createApp({ invoker, rpc, maxRequestBytes: o.maxRequestBytes, version: pkg.version, sessions });
  const httpHandler =
    d.httpSurface === "bun"
      ? bareHandler({ invoker, rpc, maxRequestBytes: o.maxRequestBytes })
      : (request: Request) => app.handle(request);
  const maxBodyBytes = readMaxBytes(o.maxRequestBytes);
  const ports: GatewayPorts = { metrics: 0 };
  const closers: (() => Promise<void> | void)[] = [];
  let stopping = false;
  try {
    if (o.protocols.has("http")) {
      const server = Bun.serve({
        hostname: o.host,
        port: o.httpPort,
        // Invocations may run up to --max-timeout without a byte on the wire.
        idleTimeout: 0,
        maxRequestBodySize: maxBodyBytes,
        fetch: httpHandler,
      });
      ports.http = server.port;
      closers.push(() => server.stop(false));
      d.log.info(
        { host: o.host, port: ports.http, protocols: ["connect", "grpc-web", "http"] },
        "http listening",
      );
    }
    const nodeDeps = {
      routes: connectRoutes,
      routerOptions: rOpts,
      fallback: app.handle,
      maxBodyBytes,
      log: d.log,
      invoker: d.grpcThroughAdapter ? undefined : invoker,
      idleTimeoutMs: o.idleTimeoutMs,
    };
    if (o.protocols.has("http")) {
      const l: Listener = await serveH2c(nodeDeps, o.host, o.grpcPort);
      ports.grpc = l.port;
      closers.push(l.close);
    }
    if (o.protocols.has("https")) {
      const l = await serveTls(nodeDeps, o.host, o.httpsPort, { cert: o.tlsCertFile, key: o.tlsKeyFile });
      ports.https = l.port;
      closers.push(l.close);
    }
    const probes = serveProbes({
      host: o.host,
      port: o.metricsPort,
      registry: metrics.registry,
      ready: () => !stopping && routes.synced,
      describe: () => ({
        routesSynced: routes.synced,
        readyRuns: routes.runs.size,
        podEndpoints: routes.endpoints.size,
        inFlight: limit.current,
        stopping,
      }),
    });
    ports.metrics = probes.port;
    closers.push(probes.stop);
  } catch (e) {
    for (const c of closers) await c();
    routes.stop();
    throw e;
  }
  d.log.info({ ports }, "gateway started");
  return {
    ports,
    metrics,
    routes,
    async stop(graceMs = o.shutdownGraceMs) {
      stopping = true;
      const deadline = performance.now() + graceMs;
      while (limit.current > 0 && performance.now() < deadline) await Bun.sleep(20);
      for (const c of closers) await c();
      routes.stop();
    },
  };
}
