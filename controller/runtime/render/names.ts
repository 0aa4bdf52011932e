/** Names, labels and the owner reference of the objects a Runtime owns. */

import { API_VERSION, Labels, MANAGED_BY, RUNTIME_KIND, type Runtime } from "@kruntimes/api";
import { boundedName } from "../../rbac/auth-delegator.ts";

export interface OwnedNames {
  deployment: string;
  service: string;
  serviceAccount: string;
  role: string;
  roleBinding: string;
  /** Cluster-scoped: the namespace is part of the name. */
  authDelegatorBinding: string;
  networkPolicy: string;
}

export function ownedNames(rt: Runtime): OwnedNames {
  const name = rt.metadata.name ?? "";
  return {
    deployment: name,
    service: name,
    serviceAccount: `${name}-runtimed`,
    role: `${name}-runtimed`,
    roleBinding: `${name}-runtimed`,
    authDelegatorBinding: boundedName(`kruntimes-runtimed-${rt.metadata.namespace ?? ""}-${name}`),
    networkPolicy: `${name}-dataplane`,
  };
}

/** Labels on every owned object and the pod selector of the Deployment and Service. */
export function selectorLabels(rt: Runtime): Record<string, string> {
  return { [Labels.runtime]: rt.metadata.name ?? "", [Labels.managedBy]: MANAGED_BY };
}

export function ownerReference(rt: Runtime) {
  return {
    apiVersion: API_VERSION,
    kind: RUNTIME_KIND,
    name: rt.metadata.name ?? "",
    uid: rt.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function ownedMeta(rt: Runtime, name: string) {
  return {
    name,
    namespace: rt.metadata.namespace,
    labels: selectorLabels(rt),
    ownerReferences: [ownerReference(rt)],
  };
}
