/**
 * runtimed's identity: a ServiceAccount (unless the template names its own), a Role with
 * exactly what runtimed does — read and watch Runs, patch them (the function finalizer; with an
 * artifact store also the artifacts finalizer, label and snapshot) and their status, read the
 * PersistentWorkspaces bound to its pod and remove their finalizer once it cleaned up, keep its
 * heartbeat Lease, record Events — and a ClusterRoleBinding to `system:auth-delegator`, so its
 * dataplane can check callers' tokens (TokenReview). RBAC cannot scope `create` to a name; runtimed only touches the Lease named
 * after its pod (an admission policy can enforce that; see docs/concepts/runtimes.md).
 */
import { GROUP, RUN_PLURAL, type Runtime, WORKSPACE_PLURAL } from "@kruntimes/api";
import { authDelegatorBinding } from "../../rbac/auth-delegator.ts";
import { ownedMeta, ownedNames, selectorLabels } from "./names.ts";

export const RUNTIMED_RULES = [
  { apiGroups: [GROUP], resources: [RUN_PLURAL], verbs: ["get", "list", "watch", "patch"] },
  { apiGroups: [GROUP], resources: [`${RUN_PLURAL}/status`], verbs: ["patch"] },
  // The PersistentWorkspaces bound to its pod: their directory, and on deletion the finalizer.
  { apiGroups: [GROUP], resources: [WORKSPACE_PLURAL], verbs: ["get", "list", "watch", "patch"] },
  {
    apiGroups: ["coordination.k8s.io"],
    resources: ["leases"],
    verbs: ["get", "create", "update", "patch", "delete"],
  },
  { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create"] },
];

/** The ServiceAccount the pods run as: the template's own, or one made for the Runtime. */
export function podServiceAccount(rt: Runtime): { name: string; ours: boolean } {
  const own = (rt.spec.template.spec as { serviceAccountName?: string }).serviceAccountName;
  return own ? { name: own, ours: false } : { name: ownedNames(rt).serviceAccount, ours: true };
}

export function renderServiceAccount(rt: Runtime) {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: ownedMeta(rt, ownedNames(rt).serviceAccount),
    automountServiceAccountToken: false,
  };
}

export function renderRole(rt: Runtime) {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: ownedMeta(rt, ownedNames(rt).role),
    rules: RUNTIMED_RULES,
  };
}

/** Not owner-referenced (cluster-scoped): the Runtime reconciler deletes it with the Runtime. */
export function renderAuthDelegatorBinding(rt: Runtime) {
  return authDelegatorBinding(ownedNames(rt).authDelegatorBinding, selectorLabels(rt), {
    name: podServiceAccount(rt).name,
    namespace: rt.metadata.namespace ?? "",
  });
}

export function renderRoleBinding(rt: Runtime) {
  const names = ownedNames(rt);
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: ownedMeta(rt, names.roleBinding),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: names.role },
    subjects: [
      { kind: "ServiceAccount", name: podServiceAccount(rt).name, namespace: rt.metadata.namespace },
    ],
  };
}
