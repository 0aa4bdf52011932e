/**
 * What wakes the autoscaler for a Runtime with `spec.autoscaling`: a Run of it created, changed
 * or deleted (a backlog forms or drains), its pods changing or freeing capacity, the Runtime or
 * its Deployment changing. Each adds the Runtime's key at once: the work queue coalesces the
 * events of a burst that arrive while a reconcile runs into one more reconcile, so a backlog is
 * acted on within one reconcile plus one scale write.
 */
import type { Run, Runtime } from "@kruntimes/api";
import type { Informer } from "@kruntimes/kube";
import type { Deployment } from "../kube-types.ts";
import type { Controller } from "../reconcile/controller.ts";
import type { CacheListener } from "../scheduler/cache/scheduler-cache.ts";
import { runtimeKeyOf } from "../scheduler/run-request.ts";
import type { AutoscalerReconciler } from "./autoscaler-reconciler.ts";

/** Delay before an event's reconcile (0: at once; the work queue coalesces the rest). */
export const AUTOSCALE_DEBOUNCE_MS = 0;

export interface AutoscaleWiring {
  runtimes: Informer<Runtime>;
  runs: Informer<Run>;
  deployments: Informer<Deployment>;
  reconciler: AutoscalerReconciler;
  controller: () => Controller;
}

function poke(w: AutoscaleWiring, key: string): void {
  const rt = w.runtimes.get(key);
  if (!rt?.spec.autoscaling) return;
  w.reconciler.triggered(key);
  w.controller().queue.addAfter(key, AUTOSCALE_DEBOUNCE_MS);
}

export function wireAutoscaler(w: AutoscaleWiring): void {
  const byRun = (run: Run) => poke(w, runtimeKeyOf(run));
  w.runs.on({ add: byRun, update: byRun, delete: byRun });
  const byRuntime = (rt: Runtime) => {
    // Also when autoscaling was just removed: the reconcile gives drained pods back.
    w.controller().queue.addAfter(`${rt.metadata.namespace}/${rt.metadata.name}`, AUTOSCALE_DEBOUNCE_MS);
  };
  w.runtimes.on({ add: byRuntime, update: byRuntime, delete: byRuntime });
  const byDeployment = (d: Deployment) => poke(w, `${d.metadata.namespace}/${d.metadata.name}`);
  w.deployments.on({ add: byDeployment, update: byDeployment, delete: byDeployment });
}

export function autoscaleCacheHooks(w: AutoscaleWiring): Partial<CacheListener> {
  return {
    runtimePodsChanged: (rt) => poke(w, rt),
    podFreed: (pod) => poke(w, pod.runtimeKey),
  };
}
