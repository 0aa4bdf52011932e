/**
 * runtimed's identity: a ServiceAccount (unless the template names its own) and a Role with
 * exactly what runtimed does — read and watch Runs, patch their status, keep its heartbeat Lease,
 * record Events. RBAC cannot scope `create` to a name; runtimed only touches the Lease named
 * after its pod (an admission policy can enforce that; see docs/concepts/runtimes.md).
 */
import { GROUP, RUN_PLURAL, type Runtime } from "@kruntimes/api";
import { ownedMeta, ownedNames } from "./names.ts";

export const RUNTIMED_RULES = [
  { apiGroups: [GROUP], resources: [RUN_PLURAL], verbs: ["get", "list", "watch"] },
  { apiGroups: [GROUP], resources: [`${RUN_PLURAL}/status`], verbs: ["patch"] },
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
    // With an artifact store, runtimed puts the artifacts finalizer, label and snapshot on Runs.
    rules: rt.spec.artifactStore
      ? [...RUNTIMED_RULES, { apiGroups: [GROUP], resources: [RUN_PLURAL], verbs: ["patch"] }]
      : RUNTIMED_RULES,
  };
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
