#!/usr/bin/env bun
/**
 * kruntimes controller: one process, one active leader. Runtime reconciler, Run scheduler,
 * stale-assignment recovery and TTL GC. `bun controller/main.ts --help` lists every flag.
 */
import { KubeClient, resolveConnection } from "@kruntimes/kube";
import pino from "pino";
import { collectDefaultMetrics } from "prom-client";
import { Manager } from "./manager/manager.ts";
import { helpText, OptionsError, parseOptions } from "./options.ts";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(helpText());
  process.exit(0);
}

let options: ReturnType<typeof parseOptions>;
try {
  options = parseOptions(argv, process.env);
} catch (e) {
  if (!(e instanceof OptionsError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}

const log = pino({ level: options.logLevel, base: { component: "controller" } });
const client = new KubeClient(
  resolveConnection({ kubeconfig: options.kubeconfig, context: options.context, env: process.env }),
  // Its user agent is its field manager: server-side applies and plain writes go under one name.
  { userAgent: options.fieldManager },
);
const manager = new Manager(options, client, log, () => {
  log.fatal("leadership lost; exiting so a fresh process can stand by");
  process.exit(1);
});
// Process memory, CPU and GC on /metrics (the soak benchmark watches them for growth).
collectDefaultMetrics({ register: manager.registry });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  await manager.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

log.info(
  { identity: options.identity, namespace: options.namespace ?? "(all)", leaderElect: options.leaderElect },
  "starting",
);
await manager.start();
