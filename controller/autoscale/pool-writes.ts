/**
 * The autoscaler's API writes. Replicas are server-side applied to the Deployment's scale
 * subresource under the autoscaler's own field manager, so it owns `spec.replicas` and the Runtime
 * reconciler's apply of the template leaves the field alone (see `replicasOwnedBy`).
 *
 * A drained pod is removed exactly: first taken out of its ReplicaSet by removing the selector
 * label `app.kubernetes.io/managed-by` (the ReplicaSet releases a pod its selector no longer
 * matches, and counts one pod fewer), then the Deployment is scaled down by one, then that pod
 * is deleted by name and UID. Scaling first would let the ReplicaSet pick which pod to delete
 * (its pod-deletion-cost is only a hint); deleting first would only have it replaced.
 */
import { API_VERSION, Labels, RUNTIME_KIND, RuntimeResource, type RuntimeStatus } from "@kruntimes/api";
import { type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import type { Deployment } from "../kube-types.ts";
import { DRAIN_ANNOTATION } from "../scheduler/cache/pod-info.ts";

/** JSON-pointer escape of one path segment. */
const seg = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

export class PoolWrites {
  constructor(
    private readonly client: KubeClient,
    readonly fieldManager: string,
  ) {}

  /**
   * Sets the Deployment's replicas through its scale subresource, server-side applied: the
   * autoscaler's manager owns `spec.replicas` afterwards even when the value did not change.
   * Returns what was stored.
   */
  async scale(ns: string, deployment: string, replicas: number): Promise<number> {
    const out = await this.client.apply<{ spec?: { replicas?: number } }>(
      path(R.deployments, ns, deployment, "scale"),
      {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name: deployment, namespace: ns },
        spec: { replicas },
      },
      this.fieldManager,
      true,
    );
    return out.spec?.replicas ?? replicas;
  }

  /** Marks (or un-marks) the pod as draining; fenced on its UID. */
  async mark(ns: string, pod: string, uid: string, on: boolean): Promise<void> {
    const p = `/metadata/annotations/${seg(DRAIN_ANNOTATION)}`;
    const ops = on
      ? [
          { op: "test", path: "/metadata/uid", value: uid },
          { op: "add", path: p, value: new Date().toISOString() },
        ]
      : [
          { op: "test", path: "/metadata/uid", value: uid },
          { op: "remove", path: p },
        ];
    try {
      await this.client.patch(path(R.pods, ns, pod), ops, "json");
    } catch (e) {
      // Gone, replaced, or the mark already gone: nothing left to change.
      if (e instanceof KubeError && (e.code === 404 || e.code === 422)) return;
      throw e;
    }
  }

  /** Takes the drained pod out of its ReplicaSet (it keeps running, owned by nobody). */
  async release(ns: string, pod: string, uid: string): Promise<void> {
    await this.client.patch(
      path(R.pods, ns, pod),
      [
        { op: "test", path: "/metadata/uid", value: uid },
        { op: "remove", path: `/metadata/labels/${seg(Labels.managedBy)}` },
      ],
      "json",
    );
  }

  /** Deletes the released pod, only that incarnation; gone already is fine. */
  async delete(ns: string, pod: string, uid: string): Promise<void> {
    try {
      await this.client.delete(path(R.pods, ns, pod), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid },
      });
    } catch (e) {
      if (e instanceof KubeError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }

  async status(
    ns: string,
    name: string,
    autoscaling: NonNullable<RuntimeStatus["autoscaling"]>,
  ): Promise<void> {
    await this.client.apply(
      path(RuntimeResource, ns, name, "status"),
      {
        apiVersion: API_VERSION,
        kind: RUNTIME_KIND,
        metadata: { name, namespace: ns },
        status: { autoscaling },
      },
      this.fieldManager,
      true,
    );
  }
}

interface ManagedFieldsEntry {
  manager?: string;
  fieldsV1?: { "f:spec"?: { "f:replicas"?: unknown } };
}

/** Whether `manager` owns the Deployment's `spec.replicas` (through the scale subresource or not). */
export function replicasOwnedBy(dep: Deployment | undefined, manager: string): boolean {
  const entries = (dep?.metadata as { managedFields?: ManagedFieldsEntry[] } | undefined)?.managedFields;
  return (
    entries?.some((m) => m.manager === manager && m.fieldsV1?.["f:spec"]?.["f:replicas"] !== undefined) ??
    false
  );
}

/** The autoscaler's field manager: apart from the controller's, so each owns its own fields. */
export function autoscalerFieldManager(controllerFieldManager: string): string {
  return `${controllerFieldManager}-autoscaler`;
}
