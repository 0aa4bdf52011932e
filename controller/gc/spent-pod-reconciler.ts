/**
 * Sessions are exclusive and ephemeral: the pod a session Run held is never offered again. The
 * mark is the session Run's own terminal status (written by runtimed, fenced on the pod UID), so
 * runtimed needs no right on Pods. This reconciler, keyed by Run, deletes the pod incarnation a
 * finished session held — `preconditions.uid`, so a pod re-created under the same name is never
 * touched — and the Runtime's Deployment refills the pool. Until the pod is gone the scheduler
 * keeps it out of every placement (cache: the usage is `spent`). A controller that restarts
 * replays every Run, so a pod whose deletion was missed is deleted then.
 * Needs `delete` on pods in the Runtimes' namespaces.
 */
import type { Run } from "@kruntimes/api";
import { isConflict, isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import { spentPodOf } from "../scheduler/run-request.ts";

export interface SpentPodDeps {
  runs: { get(key: string): Run | undefined };
  pods: { get(key: string): { metadata: { uid?: string; deletionTimestamp?: string } } | undefined };
  client: KubeClient;
  registry: Registry;
}

export class SpentPodReconciler implements Reconciler {
  readonly name = "spent-pod";
  private readonly deleted: Counter<string>;

  constructor(private readonly d: SpentPodDeps) {
    this.deleted = new Counter({
      name: "kruntimes_session_pods_replaced_total",
      help: "Runtime pods deleted (and so replaced by their Deployment) because a session Run ended on them.",
      registers: [d.registry],
    });
  }

  static wants(run: Run): boolean {
    return spentPodOf(run) !== undefined;
  }

  async reconcile(key: string): Promise<Result> {
    const run = this.d.runs.get(key);
    const spent = run && spentPodOf(run);
    if (!spent) return Result.done();
    const ns = run.metadata.namespace ?? "";
    const pod = this.d.pods.get(`${ns}/${spent.pod}`);
    if (!pod || pod.metadata.uid !== spent.podUID || pod.metadata.deletionTimestamp) return Result.done();
    try {
      await this.d.client.delete(path(R.pods, ns, spent.pod), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: spent.podUID },
      });
      this.deleted.inc();
    } catch (e) {
      // Already gone, or another incarnation holds the name now: nothing of ours to delete.
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    return Result.done();
  }
}
