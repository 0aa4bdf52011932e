/**
 * Reconciles a Runtime, keyed by namespace/name: server-side applies what it owns (identity,
 * RBAC, headless Service, Deployment — owner-referenced, so deleting the Runtime removes them),
 * then writes its status from observed pods and heartbeats. Applies are skipped while the
 * rendered objects are unchanged and the Deployment carries the current template hash; a
 * periodic resync re-applies everything to repair drift.
 */
import { Annotations, API_VERSION, RUNTIME_KIND, type Runtime, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Deployment } from "../kube-types.ts";
import { applyTolerating403, deleteBinding } from "../rbac/auth-delegator.ts";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import type { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import type { Clock } from "../util/clock.ts";
import { ownedNames } from "./render/names.ts";
import { NETWORK_POLICIES } from "./render/network-policy.ts";
import { TemplateError } from "./render/pod-template.ts";
import type { RenderOptions } from "./render/render-options.ts";
import { type RenderedRuntime, renderRuntime } from "./render/render-runtime.ts";
import { withReplicasOwner } from "./replicas-owner.ts";
import { runtimeStatus, sameStatus } from "./runtime-status.ts";

export interface RuntimeReconcilerDeps {
  runtimes: { get(key: string): Runtime | undefined };
  deployments: { get(key: string): Deployment | undefined };
  cache: SchedulerCache;
  client: KubeClient;
  clock: Clock;
  log: Logger;
  render: RenderOptions;
  fieldManager: string;
  /** With spec.autoscaling: who owns the Deployment's replicas (see `withReplicasOwner`). */
  autoscalerFieldManager?: string;
  resyncMs: number;
  /** Pending Runs of a Runtime (by key) in the scheduler's queue, for `status.pendingRuns`. */
  pendingRuns?(runtimeKey: string): number;
}

export class RuntimeReconciler implements Reconciler {
  readonly name = "runtime";
  private readonly applied = new Map<string, { hash: string; atMs: number }>();

  constructor(private readonly d: RuntimeReconcilerDeps) {}

  async reconcile(key: string): Promise<Result> {
    const rt = this.d.runtimes.get(key);
    if (!rt || rt.metadata.deletionTimestamp) {
      this.applied.delete(key);
      return this.removeClusterObjects(key);
    }
    const now = this.d.clock.now();
    const ns = rt.metadata.namespace ?? "";
    let rendered: RenderedRuntime | undefined;
    let failure: { reason: string; message: string } | undefined;
    try {
      rendered = renderRuntime(rt, this.d.render);
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      failure = { reason: "InvalidTemplate", message: e.message };
    }
    const dep = this.d.deployments.get(`${ns}/${ownedNames(rt).deployment}`);
    if (rendered && rt.spec.autoscaling)
      rendered = withReplicasOwner(rendered, rt, dep, this.d.autoscalerFieldManager ?? "");
    let applied = false;
    if (rendered && this.needsApply(key, rendered, dep, now)) {
      try {
        for (const o of rendered.objects) {
          if (o.clusterScoped) {
            if (!(await applyTolerating403(this.d.client, o.body, this.d.fieldManager)))
              this.d.log.warn(
                { runtime: key, binding: o.name },
                "may not bind runtimed to system:auth-delegator (controller scope Namespace?): its dataplane cannot check tokens until an admin creates this ClusterRoleBinding",
              );
            continue;
          }
          await this.d.client.apply(path(o.resource, ns, o.name), o.body, this.d.fieldManager, true);
        }
        if (!this.d.render.dataplaneNetworkPolicy)
          await this.removeNetworkPolicy(ns, ownedNames(rt).networkPolicy);
        this.applied.set(key, { hash: rendered.hash, atMs: now });
        applied = true;
      } catch (e) {
        this.applied.delete(key);
        failure = { reason: "ApplyFailed", message: e instanceof Error ? e.message : String(e) };
        this.d.log.warn({ runtime: key, err: e }, "applying the Runtime's objects failed");
      }
    }
    const status = runtimeStatus(rt, {
      pods: this.d.cache.podsOf(key),
      templateHash: rendered?.templateHash,
      failure,
      deploymentExists: dep !== undefined || applied,
      ...(rt.spec.autoscaling
        ? {
            desiredReplicas:
              rt.status?.autoscaling?.desiredReplicas ??
              dep?.spec?.replicas ??
              rt.spec.autoscaling.minReplicas,
          }
        : {}),
      ...(this.d.pendingRuns ? { pendingRuns: this.d.pendingRuns(key) } : {}),
      nowMs: now,
    });
    if (!sameStatus(rt.status, status)) {
      await this.d.client.apply(
        path(RuntimeResource, ns, rt.metadata.name, "status"),
        {
          apiVersion: API_VERSION,
          kind: RUNTIME_KIND,
          metadata: { name: rt.metadata.name, namespace: ns },
          status,
        },
        this.d.fieldManager,
        true,
      );
    }
    if (failure?.reason === "ApplyFailed") return Result.backoff(failure.message);
    return Result.requeueAfter(this.d.resyncMs);
  }

  /** The Runtime is gone: its cluster-scoped binding is not garbage-collected with it. */
  private async removeClusterObjects(key: string): Promise<Result> {
    const [namespace, name] = key.split("/") as [string, string];
    const names = ownedNames({ metadata: { namespace, name } } as Runtime);
    if (!(await deleteBinding(this.d.client, names.authDelegatorBinding)))
      this.d.log.warn(
        { runtime: key, binding: names.authDelegatorBinding },
        "may not delete runtimed's ClusterRoleBinding",
      );
    return Result.done();
  }

  /** A NetworkPolicy rendered while the flag was on is taken away when it is off. */
  private async removeNetworkPolicy(ns: string, name: string): Promise<void> {
    try {
      await this.d.client.delete(path(NETWORK_POLICIES, ns, name));
      this.d.log.info(
        { namespace: ns, name },
        "removed the dataplane NetworkPolicy (--dataplane-network-policy is off)",
      );
    } catch (e) {
      if (!(e instanceof KubeError && (e.code === 404 || e.code === 403))) throw e;
    }
  }

  private needsApply(key: string, r: RenderedRuntime, dep: Deployment | undefined, now: number): boolean {
    const last = this.applied.get(key);
    if (!last || last.hash !== r.hash || now - last.atMs >= this.d.resyncMs) return true;
    return dep?.metadata.annotations?.[Annotations.templateHash] !== r.templateHash;
  }
}
