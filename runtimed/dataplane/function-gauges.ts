/**
 * Gauges read from the Runtime Server when Prometheus scrapes (one List call over the socket):
 * registrations by state and invocations queued for a worker. Labels: the closed FunctionState set.
 */
import { FunctionState } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import { Gauge, type Registry } from "prom-client";
import type { RuntimeServerClients } from "../runtime-server/client.ts";

const STATES = [
  FunctionState.REGISTERING,
  FunctionState.READY,
  FunctionState.FAILED,
  FunctionState.DRAINING,
  FunctionState.ENDED,
];

export function registerFunctionGauges(
  registry: Registry,
  functions: RuntimeServerClients["functions"],
): void {
  let last: Promise<Awaited<ReturnType<typeof functions.list>> | undefined> | undefined;
  // Both gauges collect from the same List call per scrape.
  const list = () => {
    last ??= functions
      .list({}, { timeoutMs: 1000 })
      .catch(() => undefined)
      .finally(() => setTimeout(() => (last = undefined), 0));
    return last;
  };
  new Gauge({
    name: "kruntimes_runtimed_function_registrations",
    help: "Function registrations the Runtime Server holds, by state (ended ones are retained for a while).",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const res = await list();
      this.reset();
      if (!res) return;
      for (const s of STATES) this.set({ state: (FunctionState[s] ?? "").toLowerCase() }, 0);
      for (const r of res.registrations)
        this.inc({ state: (FunctionState[r.state] ?? "unspecified").toLowerCase() });
    },
  });
  new Gauge({
    name: "kruntimes_runtimed_function_queue_depth",
    help: "Invocations waiting for a free worker, summed over this pod's registrations (from the Runtime Server).",
    registers: [registry],
    async collect() {
      const res = await list();
      if (!res) return;
      this.set(res.registrations.reduce((n, r) => n + r.queued, 0));
    },
  });
}
