/** Builds REST paths for core and grouped resources, namespaced or cluster-scoped. */
export interface ResourceRef {
  group?: string;
  version: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function resourcePath(r: ResourceRef): string {
  let p = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (r.namespace) p += `/namespaces/${encodeURIComponent(r.namespace)}`;
  p += `/${r.plural}`;
  if (r.name) p += `/${encodeURIComponent(r.name)}`;
  if (r.subresource) p += `/${r.subresource}`;
  return p;
}

/** Well-known resources used across components. */
export const R = {
  pods: { version: "v1", plural: "pods" },
  nodes: { version: "v1", plural: "nodes" },
  services: { version: "v1", plural: "services" },
  serviceAccounts: { version: "v1", plural: "serviceaccounts" },
  configMaps: { version: "v1", plural: "configmaps" },
  secrets: { version: "v1", plural: "secrets" },
  events: { version: "v1", plural: "events" },
  namespaces: { version: "v1", plural: "namespaces" },
  deployments: { group: "apps", version: "v1", plural: "deployments" },
  replicaSets: { group: "apps", version: "v1", plural: "replicasets" },
  jobs: { group: "batch", version: "v1", plural: "jobs" },
  leases: { group: "coordination.k8s.io", version: "v1", plural: "leases" },
  roles: { group: "rbac.authorization.k8s.io", version: "v1", plural: "roles" },
  roleBindings: { group: "rbac.authorization.k8s.io", version: "v1", plural: "rolebindings" },
  crds: { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" },
} as const satisfies Record<string, Omit<ResourceRef, "namespace" | "name">>;

export function path(
  r: Omit<ResourceRef, "namespace" | "name">,
  namespace?: string,
  name?: string,
  subresource?: string,
) {
  return resourcePath({ ...r, namespace, name, subresource });
}
