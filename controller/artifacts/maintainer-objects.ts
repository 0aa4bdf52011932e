/**
 * The objects of one store's artifact maintainer, all named `krt-artifacts-<storeId>` in the
 * store's namespace (the ClusterRoleBinding also carries the namespace): a ServiceAccount; a Role
 * to watch the store's Runs and patch away their finalizer; a binding to `system:auth-delegator`
 * (TokenReview + SubjectAccessReview, for download authorization); a one-replica Deployment of
 * `runtimed maintain` with the store wired in exactly as runtimed has it; a Service for downloads.
 * None is owned by a Runtime: the maintainer must outlive it.
 */
import { type ArtifactStore, GROUP, Labels, MANAGED_BY, maintainerName, RUN_PLURAL } from "@kruntimes/api";
import { R, type ResourceRef } from "@kruntimes/kube";
import { authDelegatorBinding, CLUSTER_ROLE_BINDINGS } from "../rbac/auth-delegator.ts";
import { storeWiring } from "./store-wiring.ts";

export const MAINTAINER_PORT = 8090;
export const MAINTAINER_COMPONENT = "artifact-maintainer";
const RBAC = "rbac.authorization.k8s.io";

export interface MaintainerObject {
  resource: Omit<ResourceRef, "namespace" | "name">;
  namespace?: string;
  name: string;
  body: Record<string, unknown>;
}

export { CLUSTER_ROLE_BINDINGS };

const ROLES = R.roles;
const ROLE_BINDINGS = R.roleBindings;

export function maintainerLabels(storeId: string): Record<string, string> {
  return {
    [Labels.artifactStore]: storeId,
    [Labels.managedBy]: MANAGED_BY,
    "app.kubernetes.io/component": MAINTAINER_COMPONENT,
  };
}

export function clusterBindingName(namespace: string, storeId: string): string {
  return `${maintainerName(storeId)}-${namespace}`.slice(0, 253);
}

export interface MaintainerRender {
  image: string;
  imagePullPolicy?: string;
}

export function maintainerObjects(
  namespace: string,
  storeId: string,
  store: ArtifactStore,
  r: MaintainerRender,
): MaintainerObject[] {
  const name = maintainerName(storeId);
  const labels = maintainerLabels(storeId);
  const meta = { name, namespace, labels };
  const w = storeWiring(store);
  const field = (n: string, fieldPath: string) => ({
    name: n,
    valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } },
  });
  return [
    {
      resource: R.serviceAccounts,
      namespace,
      name,
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: meta },
    },
    {
      resource: ROLES,
      namespace,
      name,
      body: {
        apiVersion: `${RBAC}/v1`,
        kind: "Role",
        metadata: meta,
        rules: [{ apiGroups: [GROUP], resources: [RUN_PLURAL], verbs: ["get", "list", "watch", "patch"] }],
      },
    },
    {
      resource: ROLE_BINDINGS,
      namespace,
      name,
      body: {
        apiVersion: `${RBAC}/v1`,
        kind: "RoleBinding",
        metadata: meta,
        roleRef: { apiGroup: RBAC, kind: "Role", name },
        subjects: [{ kind: "ServiceAccount", name, namespace }],
      },
    },
    {
      resource: CLUSTER_ROLE_BINDINGS,
      name: clusterBindingName(namespace, storeId),
      body: authDelegatorBinding(clusterBindingName(namespace, storeId), labels, { name, namespace }),
    },
    {
      resource: R.deployments,
      namespace,
      name,
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: meta,
        spec: {
          replicas: 1,
          selector: {
            matchLabels: {
              [Labels.artifactStore]: storeId,
              "app.kubernetes.io/component": MAINTAINER_COMPONENT,
            },
          },
          template: {
            metadata: { labels },
            spec: {
              serviceAccountName: name,
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 65532,
                runAsGroup: 65532,
                seccompProfile: { type: "RuntimeDefault" },
              },
              containers: [
                {
                  name: "maintainer",
                  image: r.image,
                  ...(r.imagePullPolicy ? { imagePullPolicy: r.imagePullPolicy } : {}),
                  args: ["maintain"],
                  env: [
                    field("POD_NAMESPACE", "metadata.namespace"),
                    field("POD_IP", "status.podIP"),
                    { name: "KRT_ARTIFACT_STORE_ID", value: storeId },
                    { name: "KRT_PORT", value: String(MAINTAINER_PORT) },
                    ...w.env,
                  ],
                  ports: [{ name: "download", containerPort: MAINTAINER_PORT }],
                  readinessProbe: { httpGet: { path: "/healthz", port: "download" }, periodSeconds: 5 },
                  volumeMounts: w.mounts,
                  resources: { requests: { cpu: "10m", memory: "64Mi" }, limits: { memory: "256Mi" } },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ["ALL"] },
                  },
                },
              ],
              volumes: w.volumes,
            },
          },
        },
      },
    },
    {
      resource: R.services,
      namespace,
      name,
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta,
        spec: {
          selector: { [Labels.artifactStore]: storeId, "app.kubernetes.io/component": MAINTAINER_COMPONENT },
          ports: [{ name: "download", port: MAINTAINER_PORT, targetPort: "download" }],
        },
      },
    },
  ];
}
