/**
 * Everything a Runtime owns, rendered in apply order (identity first, the Deployment last): the
 * namespaced objects are owner-referenced; the `system:auth-delegator` ClusterRoleBinding of
 * runtimed's ServiceAccount is cluster-scoped (`clusterScoped`), named after the Runtime's
 * namespace and name, and deleted by the reconciler with the Runtime.
 */
import { createHash } from "node:crypto";
import type { Runtime } from "@kruntimes/api";
import { R, type ResourceRef } from "@kruntimes/kube";
import { CLUSTER_ROLE_BINDINGS } from "../../rbac/auth-delegator.ts";
import { renderDeployment } from "./deployment.ts";
import { NETWORK_POLICIES, renderNetworkPolicy } from "./network-policy.ts";
import {
  podServiceAccount,
  renderAuthDelegatorBinding,
  renderRole,
  renderRoleBinding,
  renderServiceAccount,
} from "./rbac.ts";
import type { RenderOptions } from "./render-options.ts";
import { renderService } from "./service.ts";

export interface OwnedObject {
  resource: Omit<ResourceRef, "namespace" | "name">;
  name: string;
  body: { metadata: { name: string } };
  /** Cluster-scoped (no namespace in its path, no owner reference). */
  clusterScoped?: boolean;
}

export interface RenderedRuntime {
  objects: OwnedObject[];
  templateHash: string;
  /** Hash of all rendered objects: unchanged means nothing to apply. */
  hash: string;
}

export function renderRuntime(rt: Runtime, o: RenderOptions): RenderedRuntime {
  const deployment = renderDeployment(rt, o);
  const bodies: [OwnedObject["resource"], { metadata: { name: string } }][] = [];
  if (podServiceAccount(rt).ours) bodies.push([R.serviceAccounts, renderServiceAccount(rt)]);
  bodies.push(
    [R.roles, renderRole(rt)],
    [R.roleBindings, renderRoleBinding(rt)],
    [CLUSTER_ROLE_BINDINGS, renderAuthDelegatorBinding(rt)],
    [R.services, renderService(rt, o)],
  );
  if (o.dataplaneNetworkPolicy) bodies.push([NETWORK_POLICIES, renderNetworkPolicy(rt, o)]);
  bodies.push([R.deployments, deployment.object]);
  const objects = bodies.map(([resource, body]) => ({
    resource,
    name: body.metadata.name,
    body,
    ...(resource === CLUSTER_ROLE_BINDINGS ? { clusterScoped: true } : {}),
  }));
  const hash = createHash("sha256").update(JSON.stringify(objects)).digest("hex").slice(0, 16);
  return { objects, templateHash: deployment.hash, hash };
}
