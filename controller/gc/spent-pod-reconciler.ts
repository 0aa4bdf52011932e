/**
 * Sessions are exclusive and ephemeral: the pod a session Run held is never offered again. The
 * mark is the session Run itself — its terminal status (written by runtimed, fenced on the pod
 * UID), or its deletion while it held the pod — so runtimed needs no right on Pods. This
 * reconciler is keyed by pod incarnation (`<namespace>/<pod>/<uid>`, so it works after the Run is
 * gone) and deletes exactly that incarnation — `preconditions.uid`, so a pod re-created under the
 * same name is never touched — and the Runtime's Deployment refills the pool. Until the pod is
 * gone the scheduler keeps it out of every placement (cache: the usage is `spent`). A controller
 * that restarts replays every Run still present, so a pod whose deletion was missed is deleted
 * then; a session Run deleted while no controller ran is the one case it cannot see.
 * Needs `delete` on pods in the Runtimes' namespaces.
 */
import { type Run, RunMode, runModeOf } from "@kruntimes/api";
import { isConflict, isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import { spentPodOf } from "../scheduler/run-request.ts";

export interface SpentPodDeps {
  pods: { get(key: string): { metadata: { uid?: string; deletionTimestamp?: string } } | undefined };
  client: KubeClient;
  registry: Registry;
}

/** The pod incarnation a session Run spent: once it ended, or when it is deleted holding one. */
export function spentPodKey(run: Run, deleted = false): string | undefined {
  const spent = deleted
    ? runModeOf(run.spec) === RunMode.Session
      ? run.status?.assignment
      : undefined
    : spentPodOf(run);
  return spent ? `${run.metadata.namespace}/${spent.pod}/${spent.podUID}` : undefined;
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

  async reconcile(key: string): Promise<Result> {
    const [ns = "", name = "", uid = ""] = key.split("/");
    const pod = this.d.pods.get(`${ns}/${name}`);
    if (!pod || pod.metadata.uid !== uid || pod.metadata.deletionTimestamp) return Result.done();
    try {
      await this.d.client.delete(path(R.pods, ns, name), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid },
      });
      this.deleted.inc();
    } catch (e) {
      // Already gone, or another incarnation holds the name now: nothing of ours to delete.
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    return Result.done();
  }
}
