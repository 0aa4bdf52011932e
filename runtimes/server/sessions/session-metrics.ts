/**
 * Prometheus metrics of the session service, registered on the server's registry. Labels come
 * from closed sets only: the RPC name, a Connect code name or OK, an ExitReason name.
 */
import { Counter, Gauge, type Registry } from "prom-client";

export interface SessionMetrics {
  /** One call of `op` ended with `code` ("OK" or a Connect code name). */
  operation(op: string, code: string): void;
  /** An Exec ended with this ExitReason name. */
  execEnded(reason: string): void;
}

export function createSessionMetrics(registry: Registry, open: () => number): SessionMetrics {
  const registers = [registry];
  const calls = new Counter({
    name: "kruntimes_runtime_server_session_calls_total",
    help: "SessionService calls, by RPC and result (OK or the Connect code).",
    labelNames: ["rpc", "code"],
    registers,
  });
  const execs = new Counter({
    name: "kruntimes_runtime_server_session_execs_total",
    help: "Exec operations that ended, by ExitReason.",
    labelNames: ["reason"],
    registers,
  });
  new Gauge({
    name: "kruntimes_runtime_server_sessions_open",
    help: "Sessions not closed (open or draining).",
    registers,
    collect() {
      this.set(open());
    },
  });
  return {
    operation: (rpc, code) => calls.inc({ rpc, code }),
    execEnded: (reason) => execs.inc({ reason }),
  };
}
