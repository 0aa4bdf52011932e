/**
 * The dashboard's Prometheus metrics. Labels come from closed sets: the route template (never
 * the URL), the method (GET/HEAD/other), the status class, the stream kind. Nothing is labelled
 * by user, namespace or Run.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface Metrics {
  registry: Registry;
  requests: Counter<"route" | "method" | "code">;
  duration: Histogram<"route">;
  streams: Gauge<"kind">;
  refusedWrites: Counter;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: "kruntimes_dashboard_" });
  return {
    registry,
    requests: new Counter({
      name: "kruntimes_dashboard_requests_total",
      help: "HTTP requests answered, by route template, method (GET, HEAD, POST, other) and status class (2xx…5xx).",
      labelNames: ["route", "method", "code"],
      registers,
    }),
    duration: new Histogram({
      name: "kruntimes_dashboard_request_duration_seconds",
      help: "Time to the response headers (a stream's first byte), seconds, by route template.",
      labelNames: ["route"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    streams: new Gauge({
      name: "kruntimes_dashboard_streams_open",
      help: "Server-Sent Event streams open now (watches and log follows), by kind.",
      labelNames: ["kind"],
      registers,
    }),
    refusedWrites: new Counter({
      name: "kruntimes_dashboard_refused_writes_total",
      help: "Requests refused with 405 because they would write (any method but GET and HEAD, except the invoke route).",
      registers,
    }),
  };
}

export function methodLabel(method: string): string {
  const m = method.toUpperCase();
  return m === "GET" || m === "HEAD" || m === "POST" ? m : "other";
}

export function codeLabel(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
