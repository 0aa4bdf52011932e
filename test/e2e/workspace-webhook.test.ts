/**
 * The PersistentWorkspace admission webhook as the chart installs it (controller.scope=Namespace
 * in a namespace of its own, two controller replicas, the chart-made certificate), called by the
 * real apiserver: who may create a Run naming a workspace (ServiceAccount tokens and
 * impersonation: allowed, denied, the named resource, a group grant), the controller's own Runs
 * only on workspaces it manages, the managed-by label reserved to the controller, the standby
 * answering, and failurePolicy Fail refusing only Runs that name a workspace. The same webhook
 * validates WorkflowRuns (graph rules, and `create` on runs for their creator).
 *
 * The local cluster's apiserver runs on the host and pods have loopback IPs without kube-proxy,
 * so a Service's ClusterIP leads nowhere. The apiserver resolves a webhook's service reference
 * through the Service: for type ExternalName it dials `<externalName>:<port>` and still verifies
 * the certificate against `<service>.<namespace>.svc`. The test turns the chart's webhook Service
 * into an ExternalName pointing at a controller pod's IP — the chart's certificate, CA bundle and
 * configuration stay exactly as installed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type Run, RunResource, WorkspaceResource } from "@kruntimes/api";
import { type ClusterConnection, KubeClient, KubeError, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import type { Pod } from "../../controller/kube-types.ts";
import { serviceAccountToken } from "../support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { applyChartCrds, CHART, HELM_MISSING, helm, helmPath, removeRelease } from "./chart-support.ts";

const cluster = testCluster();
// Pod IPs reachable from the apiserver's host: the local cluster.
const suite = cluster?.local ? describe : describe.skip;

setDefaultTimeout(60_000);

const RELEASE = "wh";
const SVC = `${RELEASE}-kruntimes-webhook`;
const CONTROLLER_SA = `${RELEASE}-kruntimes-controller`;

suite("PersistentWorkspace admission webhook (chart, real apiserver)", () => {
  const admin = cluster?.client as KubeClient;
  let ns = "";
  let conn: ClusterConnection;
  let alice: KubeClient;
  let bob: KubeClient;
  let controller: KubeClient;
  let pods: { name: string; ip: string; leader: boolean }[] = [];

  const runBody = (workspace?: string) => ({
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { generateName: "r-" },
    spec: {
      runtime: "bash",
      mode: { task: { args: ["true"] } },
      ...(workspace ? { workspace: { name: workspace } } : {}),
    },
  });
  const createRun = (as: KubeClient, workspace?: string) =>
    as.create<Run>(path(RunResource, ns), runBody(workspace));
  /** The apiserver's refusal, as the user sees it. */
  async function refusal(p: Promise<unknown>): Promise<{ code: number; message: string }> {
    try {
      await p;
    } catch (e) {
      if (e instanceof KubeError) return { code: e.code, message: e.message };
      throw e;
    }
    throw new Error("expected the apiserver to refuse, it admitted");
  }
  /** POSTs as an impersonated user (the admin's client certificate may impersonate). */
  async function impersonating(user: string, groups: string[], body: unknown): Promise<Response> {
    const headers = new Headers({ "content-type": "application/json", "Impersonate-User": user });
    for (const g of groups) headers.append("Impersonate-Group", g);
    return fetch(conn.server + path(RunResource, ns), {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      tls: { ca: conn.ca, cert: conn.cert, key: conn.key },
    } as RequestInit);
  }
  const asToken = (token: string) => new KubeClient({ ...conn, cert: undefined, key: undefined, token });
  async function role(name: string, rules: unknown[], subjects: unknown[]): Promise<void> {
    await admin.create(path(R.roles, ns), { metadata: { name }, rules });
    await admin.create(path(R.roleBindings, ns), {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects,
    });
  }
  const sa = (name: string) => ({ kind: "ServiceAccount", name, namespace: ns });
  const CREATE_RUNS = { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["create"] };
  const USE = (names: string[]) => ({
    apiGroups: ["kruntimes.io"],
    resources: ["persistentworkspaces"],
    verbs: ["use"],
    resourceNames: names,
  });
  /** Points the chart's webhook Service at one controller pod (see the file comment). */
  async function pointWebhookAt(ip: string): Promise<void> {
    await admin.delete(path(R.services, ns, SVC)).catch(() => {});
    await admin.create(path(R.services, ns), {
      metadata: { name: SVC },
      spec: { type: "ExternalName", externalName: ip, ports: [{ name: "webhook", port: 9443 }] },
    });
  }
  async function createWorkspace(name: string, as = admin, labels?: Record<string, string>) {
    return as.create(path(WorkspaceResource, ns), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "PersistentWorkspace",
      metadata: { name, ...(labels ? { labels } : {}) },
      spec: { runtime: "bash" },
    });
  }

  beforeAll(async () => {
    if (!helmPath()) throw new Error(HELM_MISSING);
    conn = loadKubeconfigFile(cluster?.kubeconfig as string);
    await applyChartCrds(admin);
    ns = (await testNamespace(admin, "krt-ws-webhook")).name;
    const r = await helm(
      [
        "install",
        RELEASE,
        CHART,
        "-n",
        ns,
        "--wait",
        "--timeout",
        "3m",
        "--set",
        "controller.scope=Namespace",
        "--set",
        "controller.replicas=2",
        "--set",
        "gateway.enabled=false",
        "--set",
        "runtimes.bash.enabled=false",
        "--set",
        "runtimes.python.enabled=false",
      ],
      cluster?.kubeconfig,
    );
    if (r.code !== 0) throw new Error(`helm install failed: ${r.stderr}`);
    // Both replicas ready; which one leads is in their logs.
    pods = await eventually(
      "two ready controller pods, one leading",
      async () => {
        const list = await admin.list<Pod>(path(R.pods, ns), {
          labelSelector: "app.kubernetes.io/component=controller",
        });
        const ready = list.items.filter(
          (p) =>
            p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") && p.status.podIP,
        );
        if (ready.length !== 2) return undefined;
        const out = [];
        for (const p of ready) {
          const log = await (
            await admin.request<Response>("GET", `${path(R.pods, ns, p.metadata.name)}/log`, { raw: true })
          ).text();
          out.push({
            name: p.metadata.name as string,
            ip: p.status?.podIP as string,
            leader: log.includes("scheduling and reconciling"),
          });
        }
        return out.filter((p) => p.leader).length === 1 ? out : undefined;
      },
      90_000,
    );
    // The standby answers: leadership plays no part in admission.
    await pointWebhookAt(pods.find((p) => !p.leader)?.ip as string);

    alice = asToken(await serviceAccountToken(admin, ns, "alice"));
    bob = asToken(await serviceAccountToken(admin, ns, "bob"));
    await role("alice", [CREATE_RUNS, USE(["data"])], [sa("alice")]);
    await role("bob", [CREATE_RUNS], [sa("bob")]);
    const group = (name: string) => ({ kind: "Group", name, apiGroup: "rbac.authorization.k8s.io" });
    await role("ws-users", [CREATE_RUNS, USE(["data", "shared"])], [group("ws-users")]);
    await role("run-creators", [CREATE_RUNS], [group("run-creators")]);
    // The chart grants the controller `create` on Runs (workflows); granted here again so the
    // test does not depend on it: the webhook's own rule for the controller is what decides.
    await role("controller-runs", [CREATE_RUNS], [sa(CONTROLLER_SA)]);
    controller = asToken(
      (
        await admin.create<{ status: { token: string } }>(
          `${path(R.serviceAccounts, ns, CONTROLLER_SA)}/token`,
          { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
        )
      ).status.token,
    );
    await createWorkspace("data");
    await createWorkspace("shared");
  }, 300_000);

  afterAll(async () => {
    if (!ns) return;
    // The workspaces were never bound (no Runtime pods): the controller removes any finalizer.
    await admin.delete(path(WorkspaceResource, ns)).catch(() => {});
    await removeRelease(cluster?.kubeconfig as string, admin, RELEASE, ns);
  }, 180_000);

  test("allowed: a user granted `use` on persistentworkspaces/data may create a Run naming it", async () => {
    const run = await createRun(alice, "data");
    expect(run.spec.workspace?.name).toBe("data");
  });

  test("the named resource: the same user is refused for a workspace not in resourceNames", async () => {
    const r = await refusal(createRun(alice, "shared"));
    expect(r.code).toBe(403);
    expect(r.message).toContain('admission webhook "runs.workspaces.kruntimes.io" denied the request');
    expect(r.message).toContain(
      `user "system:serviceaccount:${ns}:alice" may not use PersistentWorkspace "shared" in namespace "${ns}"`,
    );
    expect(r.message).toContain("resourceNames: [shared], verbs: [use]");
  });

  test("denied: a user who may create Runs but not use the workspace; Runs without one are admitted", async () => {
    const r = await refusal(createRun(bob, "data"));
    expect(r.code).toBe(403);
    expect(r.message).toContain(
      `user "system:serviceaccount:${ns}:bob" may not use PersistentWorkspace "data"`,
    );
    expect((await createRun(bob)).spec.workspace).toBeUndefined();
  });

  test("impersonation: the review carries the user's groups (a grant to a group admits its members)", async () => {
    const ok = await impersonating("carol", ["ws-users"], runBody("shared"));
    expect(ok.status).toBe(201);
    // In another group she may create Runs (RBAC lets the request through) but not use it.
    const no = await impersonating("carol", ["run-creators"], runBody("shared"));
    expect(no.status).toBe(403);
    const body = (await no.json()) as { message: string };
    expect(body.message).toContain('user "carol" may not use PersistentWorkspace "shared"');
  });

  test("controller-owned: the controller's own Runs pass only on workspaces it manages", async () => {
    // The managed-by label is the controller's to set: anyone else is refused.
    const labels = { "app.kubernetes.io/managed-by": "kruntimes" };
    const forged = await refusal(createWorkspace("forged", admin, labels));
    expect(forged.message).toContain("reserved for the kruntimes controller");
    await createWorkspace("wf");
    const relabel = await refusal(
      admin.patch(path(WorkspaceResource, ns, "wf"), { metadata: { labels } }, "merge"),
    );
    expect(relabel.message).toContain("reserved for the kruntimes controller");
    await controller.patch(path(WorkspaceResource, ns, "wf"), { metadata: { labels } }, "merge");

    expect((await createRun(controller, "wf")).spec.workspace?.name).toBe("wf");
    const foreign = await refusal(createRun(controller, "data"));
    expect(foreign.code).toBe(403);
    expect(foreign.message).toContain(
      `the kruntimes controller places Runs only on PersistentWorkspaces it manages (label app.kubernetes.io/managed-by=kruntimes); PersistentWorkspace "data" in namespace "${ns}" is not one`,
    );
    // A user with `use` on it may still name a managed workspace themselves.
    await role("alice-wf", [USE(["wf"])], [sa("alice")]);
    expect((await createRun(alice, "wf")).spec.workspace?.name).toBe("wf");
  });

  test("workflows: a graph the schema cannot judge is refused at create; a WorkflowRun needs create on runs", async () => {
    const WF = { apiGroups: ["kruntimes.io"], resources: ["workflowruns"], verbs: ["create"] };
    await role("wf-bob", [WF], [sa("bob")]);
    const carol = asToken(await serviceAccountToken(admin, ns, "carol"));
    await role("wf-carol", [WF], [sa("carol")]);
    const wfrun = (jobs: unknown) => ({
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "WorkflowRun",
      metadata: { generateName: "wf-" },
      spec: { runtime: "bash", jobs },
    });
    const wfPath = path({ group: "kruntimes.io", version: "v1alpha1", plural: "workflowruns" }, ns);
    const cycle = await refusal(
      bob.create(
        wfPath,
        wfrun({
          a: { needs: ["b"], steps: [{ name: "s", run: "true" }] },
          b: { needs: ["a"], steps: [{ name: "s", run: "true" }] },
        }),
      ),
    );
    expect(cycle.code).toBe(422);
    expect(cycle.message).toContain("spec.jobs.a.needs: jobs form a cycle: a → b → a");
    const scope = await refusal(
      bob.create(wfPath, wfrun({ a: { steps: [{ name: "s", run: "echo ${{ steps.later.outputs.x }}" }] } })),
    );
    expect(scope.message).toContain('step "later" is not an earlier step of this job');
    // Valid, by someone who may create Runs: admitted.
    const ok = await bob.create<{ metadata: { name: string } }>(
      wfPath,
      wfrun({ a: { steps: [{ name: "s", run: "true" }] } }),
    );
    expect(ok.metadata.name).toStartWith("wf-");
    // Valid, by someone who may create WorkflowRuns but not Runs: refused, saying what to ask for.
    const denied = await refusal(carol.create(wfPath, wfrun({ a: { steps: [{ name: "s", run: "true" }] } })));
    expect(denied.code).toBe(403);
    expect(denied.message).toContain("may not create WorkflowRuns in namespace");
    expect(denied.message).toContain("create on runs.kruntimes.io");
  });

  test("failurePolicy Fail: no webhook answering refuses Runs naming a workspace, and only those", async () => {
    // A loopback address no pod holds: the call fails at once.
    await pointWebhookAt("127.1.255.254");
    try {
      const r = await refusal(createRun(alice, "data"));
      expect(r.code).toBe(500);
      expect(r.message).toContain('failed calling webhook "runs.workspaces.kruntimes.io"');
      expect((await createRun(alice)).spec.workspace).toBeUndefined();
    } finally {
      await pointWebhookAt(pods.find((p) => p.leader)?.ip as string);
    }
    expect((await createRun(alice, "data")).spec.workspace?.name).toBe("data");
  });
});
