/** Informer events → the scheduler's cache and queue, and the keys of each reconciler. */
import { Labels, type Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Logger } from "pino";
import { maintainerKey } from "../artifacts/maintainer-reconciler.ts";
import { FunctionFinalizerReconciler } from "../gc/function-finalizer-reconciler.ts";
import { spentPodKey } from "../gc/spent-pod-reconciler.ts";
import { TtlReconciler } from "../gc/ttl-reconciler.ts";
import type { Controller } from "../reconcile/controller.ts";
import { holdsCapacity, runtimeKeyOf } from "../scheduler/run-request.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import type { Informers } from "./informers.ts";

export interface Controllers {
  runtime: Controller;
  pending: Controller;
  recovery: Controller;
  ttl: Controller;
  /** Artifact maintainers, keyed `<namespace>/<storeId>`. */
  artifacts: Controller;
  /** The function finalizer where no runtimed can remove it. */
  functionFinalizer: Controller;
  /** Pods a finished session held: deleted so the Deployment replaces them. */
  spentPods: Controller;
  /** PersistentWorkspaces: binding, Lost, Released, active Runs, TTL, the finalizer where no runtimed can. */
  workspace: Controller;
  /** WorkflowRuns: start, children, status. */
  workflow: Controller;
  /** Runtimes with spec.autoscaling: replicas from load, drains for scale-downs. */
  autoscaler: Controller;
}

/**
 * How often at most a Runtime's `status.pendingRuns` is refreshed while its Runs come and go: a
 * Run event schedules the Runtime's reconcile this long ahead, and the events meanwhile ride on
 * it — one status write per Runtime per interval in a burst, none when the count did not change.
 */
export const PENDING_RUNS_REFRESH_MS = 2000;

export function wireEvents(i: Informers, scheduler: Scheduler, c: Controllers, log: Logger): void {
  const cache = scheduler.cache;
  const onError = (what: string) => (err: unknown) =>
    log.warn({ err, informer: what }, "watch failed; relisting");

  i.runtimes.on({
    add: (rt) => {
      cache.upsertRuntime(rt);
      c.runtime.enqueue(keyOf(rt));
    },
    update: (rt) => {
      cache.upsertRuntime(rt);
      c.runtime.enqueue(keyOf(rt));
    },
    delete: (rt) => cache.deleteRuntime(keyOf(rt)),
    error: onError("runtimes"),
  });

  const pendingMayChange = (run: Run) => c.runtime.queue.addAfter(runtimeKeyOf(run), PENDING_RUNS_REFRESH_MS);
  const runChanged = (run: Run) => {
    scheduler.runUpserted(run);
    pendingMayChange(run);
    const key = keyOf(run);
    if (holdsCapacity(run)) c.recovery.enqueue(key);
    if (TtlReconciler.wants(run)) c.ttl.enqueue(key);
    if (FunctionFinalizerReconciler.wants(run)) c.functionFinalizer.enqueue(key);
    const spent = spentPodKey(run);
    if (spent) c.spentPods.enqueue(spent);
    const store = maintainerKey(run);
    if (store) c.artifacts.enqueue(store);
  };
  i.runs.on({
    add: runChanged,
    update: runChanged,
    delete: (run) => {
      scheduler.runDeleted(run);
      pendingMayChange(run);
      // A session deleted while it held its pod spends the pod all the same.
      const used = spentPodKey(run, true);
      if (used) {
        const a = run.status?.assignment;
        if (a) cache.markSpent(`${run.metadata.namespace}/${a.pod}`, a.podUID);
        c.spentPods.enqueue(used);
      }
      const store = maintainerKey(run);
      if (store) c.artifacts.enqueue(store);
    },
    error: onError("runs"),
  });

  i.pods.on({
    add: (pod) => cache.upsertPod(pod),
    update: (pod) => cache.upsertPod(pod),
    delete: (pod) => cache.deletePod(pod),
    error: onError("pods"),
  });

  i.leases.on({
    add: (lease) => cache.upsertLease(lease),
    update: (lease) => cache.upsertLease(lease),
    relisted: () => cache.leasesRelisted(),
    delete: (lease) => cache.deleteLease(lease),
    error: onError("leases"),
  });

  const deploymentChanged = (d: { metadata: { namespace?: string; labels?: Record<string, string> } }) => {
    const rt = d.metadata.labels?.[Labels.runtime];
    if (rt) c.runtime.enqueue(`${d.metadata.namespace}/${rt}`);
    // A maintainer seen at start (or changed by hand) is checked against the Runs that need it.
    const store = d.metadata.labels?.[Labels.artifactStore];
    if (store) c.artifacts.enqueue(`${d.metadata.namespace}/${store}`);
  };
  i.deployments.on({
    add: deploymentChanged,
    update: deploymentChanged,
    delete: deploymentChanged,
    error: onError("deployments"),
  });
}
