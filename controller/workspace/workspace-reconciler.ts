/**
 * The PersistentWorkspace reconciler, keyed by workspace. It plans from the informers (the
 * workspace, the Runs naming it, the scheduler cache's pods) and writes what differs: the
 * finalizer before a binding, the status as one fenced JSON patch (tests on `phase` and
 * `boundPodUID`, so a controller acting on stale state — a deposed leader — can neither bind a
 * workspace twice nor undo a Lost), the finalizer's removal where no runtimed can clean up, and
 * the TTL deletion (UID precondition). Events reach it through WorkspaceIndex: the workspace, its
 * Runs, its bound pod, a pod becoming available in its namespace.
 */
import {
  type PersistentWorkspace,
  type PersistentWorkspaceStatus,
  type Run,
  WORKSPACE_FINALIZER,
  WorkspacePhase,
  WorkspaceResource,
} from "@kruntimes/api";
import { isConflict, isNotFound, type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import type { JsonPatchOp } from "../status/json-patch.ts";
import { resultOfWriteError } from "../status/write-result.ts";
import { canonicalJson } from "../util/canonical-json.ts";
import type { Clock } from "../util/clock.ts";
import type { Candidate } from "./binding.ts";
import type { WorkspaceIndex } from "./workspace-index.ts";
import { planWorkspace } from "./workspace-plan.ts";

/** The scheduler cache's view of pods: what binding and Lost detection need. */
export interface PodsView {
  pod(key: string): { uid: string } | undefined;
  /** Pods of the Runtime `namespace/name` a workspace may bind to now. */
  bindable(runtimeKey: string, nowMs: number): readonly Candidate[];
}

export interface WorkspaceReconcilerDeps {
  workspaces: { get(key: string): PersistentWorkspace | undefined };
  runs: { get(key: string): Run | undefined };
  index: WorkspaceIndex;
  pods: PodsView;
  client: KubeClient;
  clock: Clock;
  registry: Registry;
  log: Logger;
}

/** Tests that hold when the stored status is still the one the plan was made from. */
export function statusFence(s: PersistentWorkspaceStatus | undefined): JsonPatchOp[] {
  if (!s) return [{ op: "test", path: "/status", value: null }];
  return [
    { op: "test", path: "/status/phase", value: s.phase ?? null },
    { op: "test", path: "/status/boundPodUID", value: s.boundPodUID ?? null },
  ];
}

export class WorkspaceReconciler implements Reconciler {
  readonly name = "workspace";
  private readonly transitions: Counter<string>;
  private readonly ttlDeleted: Counter<string>;

  constructor(private readonly d: WorkspaceReconcilerDeps) {
    this.transitions = new Counter({
      name: "kruntimes_workspace_transitions_total",
      help: "PersistentWorkspace phase changes the controller wrote.",
      labelNames: ["phase"],
      registers: [d.registry],
    });
    this.ttlDeleted = new Counter({
      name: "kruntimes_workspace_ttl_deleted_total",
      help: "PersistentWorkspaces deleted after ttlSecondsAfterUnused.",
      registers: [d.registry],
    });
  }

  async reconcile(key: string): Promise<Result> {
    let ws = this.d.workspaces.get(key);
    if (!ws) return Result.done();
    const ns = ws.metadata.namespace ?? "";
    const now = this.d.clock.now();
    const runs: Run[] = [];
    for (const k of this.d.index.runsOf(key)) {
      const r = this.d.runs.get(k);
      if (r) runs.push(r);
    }
    const plan = planWorkspace({
      ws,
      runs,
      pod: (name) => this.d.pods.pod(`${ns}/${name}`),
      candidates: (runtime) => this.d.pods.bindable(`${ns}/${runtime}`, now),
      nowMs: now,
    });
    const wsPath = path(WorkspaceResource, ns, ws.metadata.name);
    try {
      if (plan.addFinalizer) {
        ws = await this.d.client.patch<PersistentWorkspace>(
          wsPath,
          [
            { op: "test", path: "/metadata/uid", value: ws.metadata.uid },
            ...(ws.metadata.finalizers
              ? [{ op: "add", path: "/metadata/finalizers/-", value: WORKSPACE_FINALIZER }]
              : [{ op: "add", path: "/metadata/finalizers", value: [WORKSPACE_FINALIZER] }]),
          ],
          "json",
        );
      }
      if (canonicalJson(plan.status) !== canonicalJson(ws.status ?? {})) {
        await this.d.client.patch(
          `${wsPath}/status`,
          [...statusFence(ws.status), { op: "add", path: "/status", value: plan.status }],
          "json",
        );
        if (plan.status.phase !== ws.status?.phase) {
          this.transitions.inc({ phase: plan.status.phase ?? "" });
          const level = plan.status.phase === WorkspacePhase.Lost ? "warn" : "info";
          this.d.log[level](
            { workspace: key, phase: plan.status.phase, pod: plan.status.boundPod },
            `workspace ${plan.status.message}`,
          );
        }
      }
      if (plan.removeFinalizer) await this.removeFinalizer(ws, wsPath);
    } catch (e) {
      return resultOfWriteError(e);
    }
    if (plan.deleteAtMs === undefined) return Result.done();
    if (now < plan.deleteAtMs) return Result.requeueAfter(plan.deleteAtMs - now);
    try {
      await this.d.client.delete(wsPath, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: ws.metadata.uid },
      });
      this.ttlDeleted.inc();
      this.d.log.info({ workspace: key }, "workspace unused for ttlSecondsAfterUnused: deleted");
    } catch (e) {
      // Gone already, or the name belongs to a new workspace now (UID precondition).
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    return Result.done();
  }

  private async removeFinalizer(ws: PersistentWorkspace, wsPath: string): Promise<void> {
    const i = ws.metadata.finalizers?.indexOf(WORKSPACE_FINALIZER) ?? -1;
    if (i < 0) return;
    try {
      await this.d.client.patch(
        wsPath,
        [
          { op: "test", path: "/metadata/uid", value: ws.metadata.uid },
          { op: "test", path: `/metadata/finalizers/${i}`, value: WORKSPACE_FINALIZER },
          { op: "remove", path: `/metadata/finalizers/${i}` },
        ],
        "json",
      );
    } catch (e) {
      // Gone, or the list changed under us: the next event decides again.
      if (!isNotFound(e) && !isConflict(e) && !(e instanceof KubeError && e.code === 422)) throw e;
    }
  }
}
