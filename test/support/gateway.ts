/**
 * What the gateway suites and benchmarks share (e2e gateway and gateway-sessions, bench/gateway,
 * bench/session-gateway): ServiceAccount tokens (with an audience, e.g. the dataplane's), the
 * gateway's own ServiceAccount with the chart's least-privilege ClusterRole and its removal, a
 * Role granting `create` on a Run subresource, and the files and flags a gateway process starts
 * with (its token kubeconfig and dataplane token). One copy, so the suites cannot drift in how
 * they set the gateway up.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { tokenKubeconfig } from "./artifacts.ts";

const CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
const CLUSTER_ROLE_BINDINGS = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";

/** The audience runtimed's dataplane port accepts. */
export const DATAPLANE_AUDIENCE = "kruntimes-dataplane";

/** A TokenRequest (one hour) for ServiceAccount `sa`, with `audience` if given. */
export async function saToken(
  client: KubeClient,
  ns: string,
  sa: string,
  audience?: string,
): Promise<string> {
  const tr = await client.create<{ status: { token: string } }>(`${path(R.serviceAccounts, ns, sa)}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600, ...(audience ? { audiences: [audience] } : {}) },
  });
  return tr.status.token;
}

/** Creates ServiceAccount `sa` in `ns`. */
export async function createServiceAccount(client: KubeClient, ns: string, sa: string): Promise<void> {
  await client.create(path(R.serviceAccounts, ns), { metadata: { name: sa } });
}

/**
 * The gateway's ServiceAccount `gateway` in `ns` (unless `createAccount` is false: it exists
 * already) bound to ClusterRole `role` with the chart's least-privilege rules.
 */
export async function createGatewayRbac(
  client: KubeClient,
  ns: string,
  role: string,
  createAccount = true,
): Promise<void> {
  if (createAccount) await createServiceAccount(client, ns, "gateway");
  await client.create(CLUSTER_ROLES, {
    metadata: { name: role },
    rules: [
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
      { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["list", "watch"] },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
    ],
  });
  await client.create(CLUSTER_ROLE_BINDINGS, {
    metadata: { name: role },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ kind: "ServiceAccount", name: "gateway", namespace: ns }],
  });
}

/** Deletes what {@link createGatewayRbac} made outside the namespace; errors ignored. */
export async function deleteGatewayRbac(client: KubeClient, role: string): Promise<void> {
  await client.delete(`${CLUSTER_ROLE_BINDINGS}/${role}`).catch(() => {});
  await client.delete(`${CLUSTER_ROLES}/${role}`).catch(() => {});
}

/**
 * Role and RoleBinding `name` in `ns`: ServiceAccount `sa` may `create` `runs/<subresource>`
 * (invoke, session) of the Runs `runs`.
 */
export async function grantRuns(
  client: KubeClient,
  ns: string,
  name: string,
  sa: string,
  subresource: string,
  runs: string[],
): Promise<void> {
  await client.create(path(R.roles, ns), {
    metadata: { name },
    rules: [
      {
        apiGroups: ["kruntimes.io"],
        resources: [`runs/${subresource}`],
        verbs: ["create"],
        resourceNames: runs,
      },
    ],
  });
  await client.create(path(R.roleBindings, ns), {
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
  });
}

export interface GatewayFiles {
  /** The `gateway` ServiceAccount's token kubeconfig. */
  kubeconfig: string;
  /** Its dataplane-audience token. */
  dataplaneTokenFile: string;
  /** The flags every test gateway starts with: these files, `ns`, 127.0.0.1, ports 0 (http, grpc, metrics). */
  flags: string[];
  /** `KUBECONFIG` for the gateway process. */
  env: Record<string, string>;
}

/**
 * Writes, in `dir`, the token kubeconfig (file `kubeconfigName`) of ServiceAccount `gateway` in
 * `ns` on the admin kubeconfig's cluster and its dataplane token; returns them with the base flags.
 */
export async function gatewayFiles(
  client: KubeClient,
  ns: string,
  adminKubeconfig: string,
  dir: string,
  kubeconfigName = "gateway.kubeconfig",
): Promise<GatewayFiles> {
  const kubeconfig = tokenKubeconfig(
    adminKubeconfig,
    ns,
    "gateway",
    await saToken(client, ns, "gateway"),
    join(dir, kubeconfigName),
  );
  const dataplaneTokenFile = join(dir, "dataplane-token");
  writeFileSync(dataplaneTokenFile, await saToken(client, ns, "gateway", DATAPLANE_AUDIENCE));
  return {
    kubeconfig,
    dataplaneTokenFile,
    flags: [
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${ns}`,
      "--host=127.0.0.1",
      "--http-port=0",
      "--grpc-port=0",
      "--metrics-port=0",
      `--dataplane-token-file=${dataplaneTokenFile}`,
    ],
    env: { KUBECONFIG: kubeconfig },
  };
}
