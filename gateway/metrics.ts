/**
 * The gateway's Prometheus metrics. Every label comes from a closed set (service, method, protocol,
 * Connect code, re-resolve result); nothing is labelled by Run, namespace or caller.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** How the call arrived. */
export type Protocol = "http" | "connect" | "grpc" | "grpcweb";
export type ReResolveResult = "rerouted" | "unchanged" | "failed";

export interface Metrics {
  registry: Registry;
  requests: Counter<"service" | "method" | "protocol" | "code">;
  duration: Histogram<"service" | "method" | "protocol">;
  inFlight: Gauge;
  authCache: Counter<"result">;
  reResolved: Counter<"result">;
  dataplaneDuration: Histogram;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const buckets = [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];
  return {
    registry,
    requests: new Counter({
      name: "kruntimes_gateway_requests_total",
      help: "Calls answered, by service, method, protocol and Connect code (ok for success).",
      labelNames: ["service", "method", "protocol", "code"],
      registers,
    }),
    duration: new Histogram({
      name: "kruntimes_gateway_request_duration_seconds",
      help: "Time from the call's arrival in the gateway to its answer, seconds.",
      labelNames: ["service", "method", "protocol"],
      buckets,
      registers,
    }),
    inFlight: new Gauge({
      name: "kruntimes_gateway_requests_in_flight",
      help: "Calls being served now (bounded by --max-concurrent-requests).",
      registers,
    }),
    authCache: new Counter({
      name: "kruntimes_gateway_auth_cache_total",
      help: "Authorization decisions by cache result (hit, miss).",
      labelNames: ["result"],
      registers,
    }),
    reResolved: new Counter({
      name: "kruntimes_gateway_routes_reresolved_total",
      help: "Stale routes re-resolved from the apiserver: rerouted (a new pod or attempt), unchanged (503), failed.",
      labelNames: ["result"],
      registers,
    }),
    dataplaneDuration: new Histogram({
      name: "kruntimes_gateway_dataplane_duration_seconds",
      help: "Time of each call to a runtimed dataplane port, seconds.",
      buckets,
      registers,
    }),
  };
}
