#!/usr/bin/env bun
/**
 * kruntimes gateway: the authenticated front door for function Runs (and, later, sessions).
 * `bun gateway/main.ts --help` lists every flag. SIGTERM: /readyz fails at once, in-flight calls
 * get --shutdown-grace to finish, then the process exits.
 */
import { KubeClient, resolveConnection } from "@kruntimes/kube";
import pino from "pino";
import { startGateway } from "./gateway.ts";
import { type GatewayOptions, helpText, OptionsError, parseOptions } from "./options.ts";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(helpText());
  process.exit(0);
}

let options: GatewayOptions;
try {
  options = parseOptions(argv, process.env);
} catch (e) {
  if (!(e instanceof OptionsError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}

const log = pino({ level: options.logLevel, base: { component: "gateway" } });
const client = new KubeClient(
  resolveConnection({ kubeconfig: options.kubeconfig, context: options.context, env: process.env }),
  { userAgent: "kruntimes-gateway" },
);
log.info({ namespace: options.namespace ?? "(all)", protocols: [...options.protocols] }, "starting");
const gateway = await startGateway(options, { client, log });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  await gateway.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
