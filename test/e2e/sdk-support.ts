/**
 * The environment the SDK, example and MCP suites run in: the chart installed by helm in a fresh
 * namespace (controller, the built-in bash and python pools, two gateway pods with the chart-made
 * certificate; controller.scope=Namespace keeps it to that namespace), and a ServiceAccount `sdk`
 * with what an SDK user needs there — Runs (create, read, watch, cancel, delete), their invoke and
 * session subresources, pod logs, and gateway discovery — written to a token kubeconfig whose
 * current namespace is the test namespace. Go, Python and TypeScript test bodies get it through
 * the environment (sdkEnv): the harness is written once, in TypeScript, and the language suites
 * only read KRUNTIMES_TEST_*.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { serviceAccountToken, tokenKubeconfig } from "../support/artifacts.ts";
import type { TestCluster } from "../support/cluster.ts";
import { testNamespace } from "../support/cluster.ts";
import { HELM_MISSING, helmPath, installNamespaced, removeRelease } from "./chart-support.ts";

export interface SdkEnvironment {
  /** Namespace of the release, the gateway and the test's Runs. */
  namespace: string;
  /** Token kubeconfig of ServiceAccount `sdk` (current namespace: `namespace`). */
  kubeconfig: string;
  /** The cluster's admin kubeconfig. */
  adminKubeconfig: string;
  /** The bearer token inside `kubeconfig`. */
  token: string;
  /** A scratch directory for the suite's files. */
  dir: string;
  /** KRUNTIMES_TEST_* variables for a language test process (see the file comment). */
  env: Record<string, string>;
  /** Uninstalls the release and deletes the namespace. */
  remove(): Promise<void>;
}

/** The rules of the `sdk` ServiceAccount's Role: what docs/sdk/*.md tell a user to grant. */
export const SDK_USER_RULES = [
  {
    apiGroups: ["kruntimes.io"],
    resources: ["runs"],
    verbs: ["create", "get", "list", "watch", "patch", "update", "delete"],
  },
  { apiGroups: ["kruntimes.io"], resources: ["runs/invoke", "runs/session"], verbs: ["create"] },
  { apiGroups: ["kruntimes.io"], resources: ["runtimes"], verbs: ["get", "list"] },
  // Logs, and gateway discovery: on the local cluster EndpointSlices stay empty (their validation
  // refuses loopback pod IPs), so clients find gateway pods by the Service's selector.
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  { apiGroups: [""], resources: ["services", "configmaps"], verbs: ["get", "list"] },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list"] },
];

/**
 * Installs release `release` of the chart into a new namespace named after `prefix` and creates
 * the `sdk` ServiceAccount. Call from beforeAll (allow it 5 minutes) and `remove()` in afterAll.
 */
export async function sdkEnvironment(
  cluster: TestCluster,
  prefix: string,
  release = "sdk",
): Promise<SdkEnvironment> {
  if (!helmPath()) throw new Error(HELM_MISSING);
  const client: KubeClient = cluster.client;
  const ns = await testNamespace(client, prefix);
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  await installNamespaced(cluster.kubeconfig, client, release, ns.name);
  const token = await serviceAccountToken(client, ns.name, "sdk");
  await client.create(path(R.roles, ns.name), { metadata: { name: "sdk-user" }, rules: SDK_USER_RULES });
  await client.create(path(R.roleBindings, ns.name), {
    metadata: { name: "sdk-user" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "sdk-user" },
    subjects: [{ kind: "ServiceAccount", name: "sdk", namespace: ns.name }],
  });
  const kubeconfig = tokenKubeconfig(cluster.kubeconfig, ns.name, "sdk", token, join(dir, "sdk.kubeconfig"));
  return {
    namespace: ns.name,
    kubeconfig,
    adminKubeconfig: cluster.kubeconfig,
    token,
    dir,
    env: {
      KRUNTIMES_TEST_KUBECONFIG: kubeconfig,
      KRUNTIMES_TEST_NAMESPACE: ns.name,
      // The chart's gateway lives in the release namespace; SDKs default to "kruntimes".
      KRUNTIMES_TEST_GATEWAY_NAMESPACE: ns.name,
      KRUNTIMES_TEST_ADMIN_KUBECONFIG: cluster.kubeconfig,
    },
    remove: () => removeRelease(cluster.kubeconfig, client, release, ns.name),
  };
}
