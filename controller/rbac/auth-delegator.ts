/**
 * A ClusterRoleBinding of one ServiceAccount to `system:auth-delegator` (create TokenReviews and
 * SubjectAccessReviews), for the components that authenticate callers themselves: artifact
 * maintainers (downloads) and runtimed (its dataplane). Cluster-scoped, so it cannot be owned by
 * a namespaced object: its owner deletes it by name. The controller may not hold the right to
 * create it (chart `controller.scope: Namespace`): applying it then answers 403, which
 * `applyTolerating403` reports instead of failing the whole reconcile.
 */
import { createHash } from "node:crypto";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";

const RBAC = "rbac.authorization.k8s.io";
export const CLUSTER_ROLE_BINDINGS = { group: RBAC, version: "v1", plural: "clusterrolebindings" };
export const AUTH_DELEGATOR = "system:auth-delegator";
/** Label on such bindings: the namespace of the object they were made for. */
export const NAMESPACE_LABEL = "kruntimes.io/namespace";

/** `base` if it is a valid object name, else its first part plus a hash (stable, ≤ 253 chars). */
export function boundedName(base: string): string {
  if (base.length <= 253) return base;
  const h = createHash("sha256").update(base).digest("hex").slice(0, 10);
  return `${base.slice(0, 242)}-${h}`;
}

export function authDelegatorBinding(
  name: string,
  labels: Record<string, string>,
  subject: { name: string; namespace: string },
) {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name, labels: { ...labels, [NAMESPACE_LABEL]: subject.namespace } },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: AUTH_DELEGATOR },
    subjects: [{ kind: "ServiceAccount", name: subject.name, namespace: subject.namespace }],
  };
}

/** Server-side applies the binding; false (not thrown) when the controller may not create it. */
export async function applyTolerating403(
  client: KubeClient,
  body: { metadata: { name: string } },
  fieldManager: string,
): Promise<boolean> {
  try {
    await client.apply(path(CLUSTER_ROLE_BINDINGS, undefined, body.metadata.name), body, fieldManager, true);
    return true;
  } catch (e) {
    if (e instanceof KubeError && e.code === 403) return false;
    throw e;
  }
}

/** Deletes the binding; true when it is gone (404 included), false when the controller may not. */
export async function deleteBinding(client: KubeClient, name: string): Promise<boolean> {
  try {
    await client.delete(path(CLUSTER_ROLE_BINDINGS, undefined, name));
    return true;
  } catch (e) {
    if (e instanceof KubeError && e.code === 404) return true;
    if (e instanceof KubeError && e.code === 403) return false;
    throw e;
  }
}
