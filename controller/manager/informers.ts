/**
 * The informers the controller runs: Runtimes, Runs, Runtime Pods, heartbeat Leases, Deployments,
 * PersistentWorkspaces, WorkflowRuns.
 */
import {
  Labels,
  MANAGED_BY,
  type PersistentWorkspace,
  type Run,
  RunResource,
  type Runtime,
  RuntimeResource,
  type WorkflowRun,
  WorkflowRunResource,
  WorkspaceResource,
} from "@kruntimes/api";
import { Informer, type KubeClient, path, R, withoutManagedFields } from "@kruntimes/kube";
import type { Deployment, Lease, Pod } from "../kube-types.ts";

export interface Informers {
  runtimes: Informer<Runtime>;
  runs: Informer<Run>;
  pods: Informer<Pod>;
  leases: Informer<Lease>;
  deployments: Informer<Deployment>;
  workspaces: Informer<PersistentWorkspace>;
  workflowRuns: Informer<WorkflowRun>;
}

const MANAGED = `${Labels.managedBy}=${MANAGED_BY}`;

export function createInformers(client: KubeClient, namespace: string | undefined): Informers {
  return {
    runtimes: new Informer<Runtime>(client, path(RuntimeResource, namespace)),
    // Nothing in the controller reads a Run's managedFields: not kept for 10,000s of Runs.
    runs: new Informer<Run>(client, path(RunResource, namespace), { transform: withoutManagedFields }),
    pods: new Informer<Pod>(client, path(R.pods, namespace), {
      labelSelector: `${MANAGED},${Labels.runtime}`,
    }),
    // runtimed labels its heartbeat Lease with the Runtime's name; nothing else is watched.
    leases: new Informer<Lease>(client, path(R.leases, namespace), { labelSelector: Labels.runtime }),
    deployments: new Informer<Deployment>(client, path(R.deployments, namespace), { labelSelector: MANAGED }),
    workspaces: new Informer<PersistentWorkspace>(client, path(WorkspaceResource, namespace)),
    workflowRuns: new Informer<WorkflowRun>(client, path(WorkflowRunResource, namespace), {
      transform: withoutManagedFields,
    }),
  };
}

export function allInformers(i: Informers): Informer<never>[] {
  return [
    i.runtimes,
    i.runs,
    i.pods,
    i.leases,
    i.deployments,
    i.workspaces,
    i.workflowRuns,
  ] as unknown as Informer<never>[];
}
