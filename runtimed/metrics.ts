/**
 * runtimed's Prometheus metrics, every label from a closed set: terminal phases, status-write
 * kinds and results. Nothing is labelled by Run name or UID.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export type WriteKind = "running" | "terminal" | "retry" | "ready" | "finalizing";
export type WriteResult = "ok" | "fenced" | "gone" | "rejected" | "ambiguous";

export interface Metrics {
  registry: Registry;
  started: Counter<"kind">;
  finished: Counter<"phase">;
  inFlight: Gauge;
  startLatency: Histogram;
  assignmentLag: Histogram;
  executionDuration: Histogram<"phase">;
  statusWrites: Counter<"kind" | "result">;
  statusWriteDuration: Histogram<"kind">;
  leaseRenewals: Counter<"result">;
  /** Function mode (runtimed/functions, runtimed/dataplane). */
  registrations: Counter<"result">;
  invocations: Counter<"result">;
  invocationDuration: Histogram;
  invocationsInFlight: Gauge;
  dataplaneAuth: Counter<"decision" | "cached">;
}

/** `result` of kruntimes_runtimed_function_invocations_total: a closed set (see dataplane/invoke-result.ts). */
export type InvocationResult =
  | "ok"
  | "handler_error"
  | "busy"
  | "request_too_large"
  | "response_too_large"
  | "timeout"
  | "worker_crashed"
  | "cancelled"
  | "not_ready"
  | "stale_route"
  | "unauthenticated"
  | "permission_denied"
  | "unavailable"
  | "error";

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const fast = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
  return {
    registry,
    started: new Counter({
      name: "kruntimes_runtimed_runs_started_total",
      help: "Attempts handed to the Runtime Server (kind: new, retry, adopted after a restart).",
      labelNames: ["kind"],
      registers,
    }),
    finished: new Counter({
      name: "kruntimes_runtimed_runs_finished_total",
      help: "Runs whose terminal status runtimed wrote, by phase.",
      labelNames: ["phase"],
      registers,
    }),
    inFlight: new Gauge({
      name: "kruntimes_runtimed_runs_in_flight",
      help: "Runs this runtimed is executing or about to (including retry backoffs).",
      registers,
    }),
    startLatency: new Histogram({
      name: "kruntimes_runtimed_start_latency_seconds",
      help: "From seeing a Scheduled Run to the Runtime Server's TaskStarted.",
      buckets: fast,
      registers,
    }),
    assignmentLag: new Histogram({
      name: "kruntimes_runtimed_assignment_lag_seconds",
      help: "From the scheduler's bind stamp (status.timing.scheduledMicros) to this runtimed seeing the assignment: the bind write plus the watch delivery (wall clocks of two processes).",
      buckets: fast,
      registers,
    }),
    executionDuration: new Histogram({
      name: "kruntimes_runtimed_execution_duration_seconds",
      help: "From TaskStarted to TaskExited, by the Run's terminal phase for that attempt.",
      labelNames: ["phase"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
      registers,
    }),
    statusWrites: new Counter({
      name: "kruntimes_runtimed_status_writes_total",
      help: "Fenced Run status writes by kind and result (fenced = the Run moved on: another attempt or pod).",
      labelNames: ["kind", "result"],
      registers,
    }),
    statusWriteDuration: new Histogram({
      name: "kruntimes_runtimed_status_write_duration_seconds",
      help: "Latency of one status write request.",
      labelNames: ["kind"],
      buckets: fast,
      registers,
    }),
    leaseRenewals: new Counter({
      name: "kruntimes_runtimed_lease_renewals_total",
      help: "Heartbeat Lease renewals by result.",
      labelNames: ["result"],
      registers,
    }),
    registrations: new Counter({
      name: "kruntimes_runtimed_function_registrations_total",
      help: "Function registrations by result: ready, failed, readopted (after a runtimed restart), reregistered (after the Runtime Server lost it).",
      labelNames: ["result"],
      registers,
    }),
    invocations: new Counter({
      name: "kruntimes_runtimed_function_invocations_total",
      help: "Dataplane invocations by result (ok, handler_error, busy, request_too_large, response_too_large, timeout, worker_crashed, cancelled, not_ready, stale_route, unauthenticated, permission_denied, unavailable, error).",
      labelNames: ["result"],
      registers,
    }),
    invocationDuration: new Histogram({
      name: "kruntimes_runtimed_function_invocation_duration_seconds",
      help: "Dataplane invocations forwarded to the Runtime Server: from the request arriving to the answer (handler errors included).",
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30],
      registers,
    }),
    invocationsInFlight: new Gauge({
      name: "kruntimes_runtimed_function_invocations_in_flight",
      help: "Dataplane invocations forwarded and not yet answered.",
      registers,
    }),
    dataplaneAuth: new Counter({
      name: "kruntimes_runtimed_dataplane_auth_total",
      help: "Dataplane authentication decisions: allowed, unauthenticated, forbidden (subject not allowed), error (TokenReview failed); cached = answered from the cache.",
      labelNames: ["decision", "cached"],
      registers,
    }),
  };
}
