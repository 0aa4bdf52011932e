/**
 * runtimed's dataplane server alone (bench/function-invoke/hop.ts): the real handler, a table serving Run `u1`
 * attempt 1 on pod `pod`, an auth whose reviewer allows any token (cached after the first call),
 * forwarding to the Runtime Server socket given as argv[2]. Prints its port.
 */
import pino from "pino";
import { serveDataplane } from "../dataplane/dataplane-server.ts";
import { DataplaneAuth } from "../dataplane/token-auth.ts";
import { FunctionTable } from "../functions/function-table.ts";
import { createMetrics } from "../metrics.ts";
import { runtimeServerClients } from "../runtime-server/client.ts";

const metrics = createMetrics();
const table = new FunctionTable();
table.serve("u1", { namespace: "ns", name: "f", attempt: 1 });
const server = serveDataplane({
  host: "127.0.0.1",
  port: 0,
  podUID: "pod",
  socketPath: Bun.argv[2] as string,
  table,
  functions: runtimeServerClients(Bun.argv[2] as string).functions,
  auth: new DataplaneAuth(
    { subjects: ["gw"], allowTtlMs: 3_600_000, denyTtlMs: 5000, cacheSize: 16 },
    async () => ({ authenticated: true, username: "gw" }),
    metrics,
  ),
  metrics,
  log: pino({ level: "warn" }),
  draining: () => false,
});
console.log(server.port);
