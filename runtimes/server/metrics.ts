/**
 * The Runtime Server's Prometheus metrics. Every label comes from a closed set (warm/cold, the
 * TaskExitReason names, Connect codes); nothing is labelled by Run. Served at GET /metrics on the
 * socket and, with --metrics-port, on TCP for a scraper.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { TaskExitReason } from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";

/** What an execution reports about itself (kept apart from prom-client so executions stay plain). */
export interface ExecutionObserver {
  /** The program was handed to its process `launchMs` after the request arrived. */
  started(warm: boolean, launchMs: number): void;
  /** The execution ended; `durationMs` from the start of the process (0 when none started). */
  finished(reason: TaskExitReason, durationMs: number): void;
}

export interface ServerMetrics extends ExecutionObserver {
  registry: Registry;
  /** A call refused with a Connect error before anything started. */
  refused(code: string): void;
  /** An invocation ended: `result` is OK, HANDLER_ERROR or an InvokeFailure reason name. */
  invoked(result: string, durationMs: number): void;
}

export interface MetricGauges {
  running(): number;
  warmReady(): number;
  /** Function registrations not ended, invocations running and waiting over all of them. */
  functions(): { registrations: number; inFlight: number; queued: number };
}

export function createMetrics(gauges: MetricGauges): ServerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const started = new Counter({
    name: "kruntimes_runtime_server_executions_started_total",
    help: "Executions whose program was handed to a process, by start (warm interpreter or cold spawn).",
    labelNames: ["start"],
    registers,
  });
  const finished = new Counter({
    name: "kruntimes_runtime_server_executions_finished_total",
    help: "Executions that ended, by TaskExitReason.",
    labelNames: ["reason"],
    registers,
  });
  const launch = new Histogram({
    name: "kruntimes_runtime_server_launch_seconds",
    help: "From the Execute request to the program handed to its process (files, spawn or warm hand-over).",
    labelNames: ["start"],
    buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers,
  });
  const duration = new Histogram({
    name: "kruntimes_runtime_server_execution_duration_seconds",
    help: "From the start of the process to the end of the execution, by TaskExitReason.",
    labelNames: ["reason"],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600, 3600],
    registers,
  });
  const refusals = new Counter({
    name: "kruntimes_runtime_server_calls_refused_total",
    help: "Execute calls refused before anything started, by Connect code.",
    labelNames: ["code"],
    registers,
  });
  new Gauge({
    name: "kruntimes_runtime_server_executions_running",
    help: "Executions not yet exited.",
    registers,
    collect() {
      this.set(gauges.running());
    },
  });
  new Gauge({
    name: "kruntimes_runtime_server_warm_ready",
    help: "Warm interpreters started and waiting for a Run.",
    registers,
    collect() {
      this.set(gauges.warmReady());
    },
  });
  const invocations = new Counter({
    name: "kruntimes_runtime_server_invocations_total",
    help: "Function invocations that ended, by result (OK, HANDLER_ERROR, or the InvokeFailure reason).",
    labelNames: ["result"],
    registers,
  });
  const invocationSeconds = new Histogram({
    name: "kruntimes_runtime_server_invocation_duration_seconds",
    help: "Time a worker spent on a function invocation.",
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1, 5, 30, 300],
    registers,
  });
  new Gauge({
    name: "kruntimes_runtime_server_function_registrations",
    help: "Function registrations not ended (registering, ready or draining).",
    registers,
    collect() {
      this.set(gauges.functions().registrations);
    },
  });
  new Gauge({
    name: "kruntimes_runtime_server_invocations_in_flight",
    help: "Function invocations running on a worker now.",
    registers,
    collect() {
      this.set(gauges.functions().inFlight);
    },
  });
  new Gauge({
    name: "kruntimes_runtime_server_invocations_queued",
    help: "Function invocations waiting for a worker.",
    registers,
    collect() {
      this.set(gauges.functions().queued);
    },
  });
  return {
    registry,
    invoked(result, durationMs) {
      invocations.inc({ result });
      if (durationMs > 0) invocationSeconds.observe(durationMs / 1000);
    },
    started(warm, launchMs) {
      const start = warm ? "warm" : "cold";
      started.inc({ start });
      launch.observe({ start }, launchMs / 1000);
    },
    finished(reason, durationMs) {
      const name = TaskExitReason[reason] ?? "UNSPECIFIED";
      finished.inc({ reason: name });
      duration.observe({ reason: name }, durationMs / 1000);
    },
    refused(code) {
      refusals.inc({ code });
    },
  };
}
