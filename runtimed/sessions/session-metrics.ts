/**
 * Session metrics, every label from a closed set: the operation kind (the RPC), its result (a
 * Connect code name or "ok"), and gauges summed over the sessions of this runtimed.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { SessionTable } from "./session-table.ts";

export type OperationKind =
  | "exec"
  | "cancel_operation"
  | "start_process"
  | "signal_process"
  | "wait_process"
  | "list_processes"
  | "read_file"
  | "write_file"
  | "stat"
  | "make_dir"
  | "remove"
  | "rename"
  | "list_files";

export interface SessionMetrics {
  operations: Counter<"kind" | "result">;
  operationDuration: Histogram<"kind">;
  sessions: Counter<"result">;
}

export function createSessionMetrics(registry: Registry, table: SessionTable): SessionMetrics {
  new Gauge({
    name: "kruntimes_runtimed_sessions_open",
    help: "Sessions this runtimed serves now.",
    registers: [registry],
    collect() {
      this.set(table.size);
    },
  });
  new Gauge({
    name: "kruntimes_runtimed_session_queued_operations",
    help: "Mutations waiting in the sessions' queues (all sessions of this runtimed).",
    registers: [registry],
    collect() {
      let n = 0;
      for (const s of table.all()) n += s.queue.depth;
      this.set(n);
    },
  });
  return {
    operations: new Counter({
      name: "kruntimes_runtimed_session_operations_total",
      help: "Session operations by kind and result (ok or the Connect code).",
      labelNames: ["kind", "result"],
      registers: [registry],
    }),
    operationDuration: new Histogram({
      name: "kruntimes_runtimed_session_operation_duration_seconds",
      help: "Session operation latency at runtimed (queue wait included), by kind.",
      labelNames: ["kind"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30, 300],
      registers: [registry],
    }),
    sessions: new Counter({
      name: "kruntimes_runtimed_sessions_total",
      help: "Sessions ended by this runtimed, by result (the Run's phase, or readopted).",
      labelNames: ["result"],
      registers: [registry],
    }),
  };
}
