#!/usr/bin/env bun
/**
 * runtimed: the sidecar in every Runtime Pod. It heartbeats its pod with a Lease, watches the Runs
 * assigned to its pod, executes each at once through the local Runtime Server (Connect on a Unix
 * socket), writes fenced status, and on SIGTERM stops taking Runs, lets running ones finish and
 * releases its Lease. Options: `bun runtimed/main.ts --help`.
 */
import { KubeClient, resolveConnection } from "@kruntimes/kube";
import { collectDefaultMetrics } from "prom-client";
import { createArtifactMetrics } from "./artifacts/artifact-metrics.ts";
import { RunArtifacts } from "./artifacts/run-artifacts.ts";
import { serveDataplane } from "./dataplane/dataplane-server.ts";
import { registerFunctionGauges } from "./dataplane/function-gauges.ts";
import { clusterReviewer, DataplaneAuth } from "./dataplane/token-auth.ts";
import { FunctionTable } from "./functions/function-table.ts";
import { LeaseKeeper } from "./heartbeat/lease-keeper.ts";
import { serveProbes } from "./http/probe-server.ts";
import { createLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { OptionsError, parseOptions, type RuntimedOptions } from "./options.ts";
import { runtimeServerClients } from "./runtime-server/client.ts";
import { Runtimed } from "./runtimed.ts";
import { QueueBudget } from "./sessions/mutation-queue.ts";
import { createSessionMetrics } from "./sessions/session-metrics.ts";
import { SessionTable } from "./sessions/session-table.ts";
import { StatusWriter } from "./status/status-writer.ts";
import { WorkspaceDirs } from "./workspaces/workspace-dirs.ts";

// `runtimed maintain`: the artifact maintainer of one store (same image; its own process).
if (Bun.argv[2] === "maintain") {
  const { maintain } = await import("./artifacts/maintainer/maintainer.ts");
  await maintain(process.env);
} else {
  await sidecar();
}

async function sidecar(): Promise<void> {
  let o: RuntimedOptions;
  try {
    o = parseOptions(Bun.argv.slice(2), process.env);
  } catch (e) {
    if (!(e instanceof OptionsError)) throw e;
    console.error(e.message);
    process.exit(e.message.startsWith("usage:") ? 0 : 2);
  }

  const log = createLogger(o);
  const metrics = createMetrics();
  // Process memory, CPU and GC on /metrics (the soak benchmark watches them for growth).
  collectDefaultMetrics({ register: metrics.registry });
  const client = new KubeClient(resolveConnection({ kubeconfig: o.kubeconfig, env: process.env }), {
    userAgent: "kruntimes-runtimed",
  });
  const server = runtimeServerClients(o.socketPath);
  const writer = new StatusWriter(client, metrics, log, o.writeRetryMs);
  const lease = new LeaseKeeper(client, o, log, metrics);
  const artifacts = o.artifacts
    ? new RunArtifacts(
        o.artifacts,
        o.workspace,
        o.pod.namespace,
        client,
        createArtifactMetrics(metrics.registry),
        log,
      )
    : undefined;
  const table = new FunctionTable();
  const sessionTable = new SessionTable();
  const sessions = {
    table: sessionTable,
    budget: new QueueBudget(o.sessions.maxQueuedTotal),
    metrics: createSessionMetrics(metrics.registry, sessionTable),
  };
  const workspaces = new WorkspaceDirs({
    o,
    client,
    runtime: server.runtime,
    log,
    inUse: (key) => runtimed.usesWorkspace(key),
  });
  const runtimed: Runtimed = new Runtimed({
    o,
    client,
    server,
    writer,
    metrics,
    log,
    table,
    sessions,
    workspaces,
    ...(artifacts ? { artifacts } : {}),
  });
  registerFunctionGauges(metrics.registry, server.functions);
  const dataplane =
    o.dataplane.port > 0
      ? serveDataplane({
          host: o.host,
          port: o.dataplane.port,
          socketPath: o.socketPath,
          podUID: o.pod.uid,
          table,
          functions: server.functions,
          auth: new DataplaneAuth(o.dataplane, clusterReviewer(client, o.dataplane.audience), metrics),
          metrics,
          log,
          draining: () => runtimed.isDraining,
          sessions: { table: sessionTable, sessions: server.sessions, metrics: sessions.metrics },
        })
      : undefined;
  if (o.dataplane.port > 0 && o.dataplane.subjects.length === 0)
    log.warn("no --dataplane-subjects: the dataplane refuses every caller (PERMISSION_DENIED)");

  const http = serveProbes(o.host, o.port, metrics.registry, {
    server,
    watchSynced: () => runtimed.synced,
    leaseHeld: () => lease.held,
    draining: () => runtimed.isDraining,
  });
  log.info(
    { host: o.host, port: http.port, socket: o.socketPath, runtime: o.runtime, podUID: o.pod.uid },
    "runtimed starting",
  );

  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping: no new Runs; letting running ones finish");
    await runtimed.drain();
    workspaces.stop();
    await lease.release();
    http.stop(true);
    dataplane?.stop(true);
    log.info("stopped");
    process.exit(0);
  }
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  await lease.start();
  await runtimed.start();
  // After the Run watch: a deletion must see which of this pod's Runs still use the workspace.
  workspaces.start();
  log.info("runtimed ready: executing the Runs assigned to this pod");
}
