/**
 * The artifact maintainer of one store in one namespace: a long-running Deployment the controller
 * keeps while any Run of the store carries the artifacts finalizer (it outlives Runtime pods and
 * Runtimes). It watches those Runs (label `kruntimes.io/artifact-store=<id>`), deletes a deleted
 * Run's artifacts and releases it, and serves downloads to callers allowed to `get` the Run.
 * Started as `runtimed maintain` (same image as the sidecar); its metrics are on /metrics.
 */
import { Labels, type Run, RunResource } from "@kruntimes/api";
import { Informer, KubeClient, path, resolveConnection } from "@kruntimes/kube";
import pino from "pino";
import { openStore } from "../open-store.ts";
import { Cleanup } from "./cleanup.ts";
import { handleDownload } from "./download-server.ts";
import { createMaintainerMetrics } from "./maintainer-metrics.ts";
import { MaintainerOptionsError, parseMaintainerOptions } from "./maintainer-options.ts";

export async function maintain(env: Record<string, string | undefined>): Promise<void> {
  let o: ReturnType<typeof parseMaintainerOptions>;
  try {
    o = parseMaintainerOptions(env);
  } catch (e) {
    if (!(e instanceof MaintainerOptionsError)) throw e;
    console.error(e.message);
    process.exit(2);
  }
  const log = pino({ level: o.logLevel, base: { component: "artifact-maintainer", store: o.storeId } });
  const client = new KubeClient(resolveConnection({ kubeconfig: o.kubeconfig, env }), {
    userAgent: "kruntimes-artifact-maintainer",
  });
  const store = openStore(o.store, o);
  const metrics = createMaintainerMetrics();
  const cleanup = new Cleanup(client, store, log, metrics);
  const informer = new Informer<Run>(client, path(RunResource, o.namespace), {
    labelSelector: `${Labels.artifactStore}=${o.storeId}`,
  });
  informer.on({
    add: (r) => cleanup.consider(r),
    update: (r) => cleanup.consider(r),
    error: (e) => log.warn({ err: e instanceof Error ? e.message : String(e) }, "run watch"),
  });
  informer.start();
  await informer.waitForSync();
  setInterval(() => {
    for (const r of informer.values()) cleanup.consider(r);
  }, o.resyncMs);
  const server = Bun.serve({
    hostname: o.host,
    port: o.port,
    fetch: (req) => handleDownload({ client, store, namespace: o.namespace, log, metrics }, req),
  });
  log.info({ host: o.host, port: server.port, driver: store.driver }, "artifact maintainer ready");
  const stop = () => {
    informer.stop();
    server.stop(true);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
