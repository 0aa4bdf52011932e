/**
 * The dashboard suite's environment: the chart installed with `dashboard.enabled=true` into a
 * fresh namespace (the local node agent runs the dashboard image as `bun dashboard/main.ts`), a
 * second namespace the viewer may not read, and a ServiceAccount `viewer` whose Role is what
 * docs/dashboard.md tells a user to grant — read Runs, Runtimes, pods, their logs and events,
 * invoke functions, find the gateway. The browser reaches the dashboard pod at its IP.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { TestCluster } from "../support/cluster.ts";
import { eventually, testNamespace } from "../support/cluster.ts";
import { installNamespaced, ROOT, removeRelease } from "./chart-support.ts";

/** Screenshots of every view, light and dark: kept after the run (gitignored). */
export const SCREENSHOTS = join(ROOT, "test", "artifacts", "dashboard");

/** The viewer's Role (docs/dashboard.md, "Permissions"). */
export const VIEWER_RULES = [
  {
    apiGroups: ["kruntimes.io"],
    resources: ["runs", "runtimes", "workflowruns"],
    verbs: ["get", "list", "watch"],
  },
  { apiGroups: ["kruntimes.io"], resources: ["runs/invoke"], verbs: ["create"] },
  { apiGroups: [""], resources: ["pods", "events"], verbs: ["get", "list", "watch"] },
  { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  { apiGroups: [""], resources: ["services", "configmaps"], verbs: ["get", "list"] },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list"] },
];

export interface DashboardEnv {
  namespace: string;
  /** A namespace the viewer has no rights in. */
  forbidden: string;
  token: string;
  /** `http://<dashboard pod IP>:8080`. */
  url: string;
  remove(): Promise<void>;
}

export async function dashboardEnvironment(cluster: TestCluster): Promise<DashboardEnv> {
  const client: KubeClient = cluster.client;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const ns = await testNamespace(client, "dash");
  const other = await testNamespace(client, "dash-other");
  try {
    return await setUp(cluster, ns.name, other);
  } catch (e) {
    // No env is returned to remove: clean up here.
    await removeRelease(cluster.kubeconfig, client, "dash", ns.name).catch(() => {});
    await other.remove();
    throw e;
  }
}

async function setUp(
  cluster: TestCluster,
  namespace: string,
  other: { name: string; remove(): Promise<void> },
): Promise<DashboardEnv> {
  const client = cluster.client;
  const ns = { name: namespace };
  await installNamespaced(cluster.kubeconfig, client, "dash", ns.name, [
    "dashboard.enabled=true",
    "runtimes.python.enabled=false",
    "gateway.replicas=1",
    "gateway.podDisruptionBudget.enabled=false",
  ]);
  // The admission webhook (WorkflowRuns) behind an ExternalName to the controller pod: the local
  // cluster has no Service proxy (as in example-workflow.test.ts).
  const controller = await client.list<{ status?: { podIP?: string } }>(path(R.pods, ns.name), {
    labelSelector: "app.kubernetes.io/component=controller",
  });
  const controllerIp = controller.items[0]?.status?.podIP;
  if (!controllerIp) throw new Error("no controller pod IP");
  await client.delete(path(R.services, ns.name, "dash-kruntimes-webhook"));
  await client.create(path(R.services, ns.name), {
    metadata: { name: "dash-kruntimes-webhook" },
    spec: { type: "ExternalName", externalName: controllerIp, ports: [{ name: "webhook", port: 9443 }] },
  });
  await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: "viewer" } });
  await client.create(path(R.roles, ns.name), { metadata: { name: "viewer" }, rules: VIEWER_RULES });
  await client.create(path(R.roleBindings, ns.name), {
    metadata: { name: "viewer" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "viewer" },
    subjects: [{ kind: "ServiceAccount", name: "viewer", namespace: ns.name }],
  });
  const tr = await client.create<{ status: { token: string } }>(
    `${path(R.serviceAccounts, ns.name, "viewer")}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  );
  const ip = await eventually(
    "the dashboard pod is Ready",
    async () => {
      const pods = await client.list<{
        status?: { podIP?: string; conditions?: { type: string; status: string }[] };
      }>(path(R.pods, ns.name), { labelSelector: "app.kubernetes.io/name=kruntimes-dashboard" });
      const ready = pods.items.find((p) =>
        p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
      return ready?.status?.podIP;
    },
    60_000,
  );
  return {
    namespace: ns.name,
    forbidden: other.name,
    token: tr.status.token,
    url: `http://${ip}:8080`,
    async remove() {
      await removeRelease(cluster.kubeconfig, client, "dash", ns.name);
      await other.remove();
    },
  };
}
