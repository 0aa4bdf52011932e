#!/usr/bin/env bun
/**
 * The local node agent (test infrastructure): a kubelet without containers that runs the Pods
 * bound to its Node as host processes. Usage: bun test/localcluster/node-agent/main.ts --config <file>
 */
import pino from "pino";
import { NodeAgent } from "./agent.ts";
import { loadConfig } from "./config.ts";

const cfg = loadConfig(process.argv.slice(2));
const log = pino({ level: cfg.logLevel, base: { component: "node-agent", node: cfg.nodeName } });
// The only environment the agent reads: what containers inherit when their image sets nothing.
const agent = new NodeAgent(cfg, log, {
  PATH: process.env.PATH ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: process.env.HOME ?? "/root",
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  log.info("stopping: terminating all pod processes");
  await agent.stop();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());

try {
  await agent.start();
} catch (e) {
  log.fatal({ err: e instanceof Error ? e.message : String(e) }, "node agent failed to start");
  process.exit(1);
}
