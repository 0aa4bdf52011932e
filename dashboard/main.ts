#!/usr/bin/env bun
/**
 * kruntimes dashboard: a read-only web UI for Runs and Runtimes. `bun dashboard/main.ts --help`
 * lists every flag. In a cluster it serves callers with their own tokens; `krt dashboard` runs it
 * locally with the kubeconfig's credentials on 127.0.0.1.
 */
import { existsSync, readFileSync } from "node:fs";
import { type ClusterConnection, loadInCluster, resolveConnection } from "@kruntimes/kube";
import { startDashboard } from "./server/dashboard.ts";
import { dashboardLogger } from "./server/log.ts";
import { type DashboardOptions, helpText, OptionsError, parseOptions } from "./server/options.ts";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(helpText());
  process.exit(0);
}
let options: DashboardOptions;
try {
  options = parseOptions(argv, process.env);
} catch (e) {
  if (!(e instanceof OptionsError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}

const log = dashboardLogger(options.logLevel);

/** Token mode needs only the apiserver's address and CA: the dashboard's own account is never used. */
function cluster(o: DashboardOptions): ClusterConnection {
  if (o.kubeconfig || o.auth === "kubeconfig")
    return resolveConnection({ kubeconfig: o.kubeconfig, context: o.context, env: process.env });
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (host && port)
    return {
      server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      ...(existsSync(o.caFile) ? { ca: readFileSync(o.caFile, "utf8") } : {}),
      namespace: "default",
      source: "in-cluster",
    };
  const inCluster = loadInCluster(process.env);
  if (inCluster) return inCluster;
  return resolveConnection({ env: process.env });
}

const dashboard = await startDashboard(options, cluster(options), log);
let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  await dashboard.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
