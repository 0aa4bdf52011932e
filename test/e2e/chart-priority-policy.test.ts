/**
 * The chart's run-priority admission policy: what `helm template` renders (a
 * ValidatingAdmissionPolicy, its binding and the ClusterRole granting `create` on
 * `runs/priority`), and, on the local cluster, what the apiserver does with it: a Run with
 * spec.priority above Priority.unprivilegedMax is refused unless its creator may create
 * runs/priority in the namespace — checked for a ServiceAccount token and for an impersonated user.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Priority, type Run, RunResource } from "@kruntimes/api";
import { KubeClient, path, R } from "@kruntimes/kube";
import { installCrds, runManifest } from "../../controller/testing/cluster/objects.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { CHART, find, HELM_MISSING, helm, helmPath, type K8sObject, render } from "./chart-support.ts";

const available = helmPath() !== undefined;
if (!available && process.env.KUBECONFIG) throw new Error(HELM_MISSING);
const suite = available ? describe : describe.skip;

const NAME = "team-a-kr-kruntimes-run-priority";

suite("chart: run-priority admission policy (helm template)", () => {
  test("defaults: the policy, its binding for every namespace, and the ClusterRole", async () => {
    const objs = await render({}, { release: "kr", namespace: "team-a" });
    const policy = find(objs, "ValidatingAdmissionPolicy", NAME);
    expect(policy.apiVersion).toBe("admissionregistration.k8s.io/v1");
    expect(policy.spec.failurePolicy).toBe("Fail");
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ["kruntimes.io"], apiVersions: ["*"], operations: ["CREATE"], resources: ["runs"] },
    ]);
    const [v] = policy.spec.validations;
    // The threshold is the API's Priority.unprivilegedMax.
    expect(v.expression).toContain(`object.spec.priority <= ${Priority.unprivilegedMax}`);
    expect(v.expression).toContain(
      "authorizer.group('kruntimes.io').resource('runs').subresource('priority').namespace(request.namespace).check('create').allowed()",
    );
    expect(v.reason).toBe("Forbidden");
    expect(v.messageExpression).toContain(`--clusterrole=${NAME}`);
    const binding = find(objs, "ValidatingAdmissionPolicyBinding", NAME);
    expect(binding.spec).toEqual({ policyName: NAME, validationActions: ["Deny"] });
    const role = find(objs, "ClusterRole", NAME);
    expect(role.rules).toEqual([
      { apiGroups: ["kruntimes.io"], resources: ["runs/priority"], verbs: ["create"] },
    ]);
    expect(role.metadata.labels?.["rbac.authorization.k8s.io/aggregate-to-admin"]).toBeUndefined();
  });

  test("controller.scope=Namespace binds the policy to the release namespace only", async () => {
    const objs = await render({ "controller.scope": "Namespace" }, { release: "kr", namespace: "team-a" });
    expect(find(objs, "ValidatingAdmissionPolicyBinding", NAME).spec.matchResources).toEqual({
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "team-a" } },
    });
  });

  test("aggregateToAdmin labels the ClusterRole for the built-in admin role", async () => {
    const objs = await render(
      { "runPriority.aggregateToAdmin": "true" },
      { release: "kr", namespace: "team-a" },
    );
    expect(
      find(objs, "ClusterRole", NAME).metadata.labels?.["rbac.authorization.k8s.io/aggregate-to-admin"],
    ).toBe("true");
  });

  test("admissionPolicy=false renders none of it", async () => {
    const objs = await render(
      { "runPriority.admissionPolicy": "false" },
      { release: "kr", namespace: "team-a" },
    );
    expect(objs.filter((o) => o.metadata.name === NAME)).toEqual([]);
  });

  test("a misspelt key under runPriority fails the schema", async () => {
    const r = await helm(["template", "kr", CHART, "--set", "runPriority.admisionPolicy=true"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("admisionPolicy");
  });
});

const cluster = testCluster();
const live = available && cluster?.local ? describe : describe.skip;

/** Where each rendered object of the policy lives (all cluster-scoped). */
const RESOURCES: Record<string, { group: string; version: string; plural: string }> = {
  ClusterRole: { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterroles" },
  ValidatingAdmissionPolicy: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    plural: "validatingadmissionpolicies",
  },
  ValidatingAdmissionPolicyBinding: {
    group: "admissionregistration.k8s.io",
    version: "v1",
    plural: "validatingadmissionpolicybindings",
  },
};
const pathOf = (o: K8sObject) =>
  path(RESOURCES[o.kind] as (typeof RESOURCES)[string], undefined, o.metadata.name);

const USER_BOB = { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bob" };

live("chart: run-priority admission policy on the apiserver", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let policy: K8sObject[] = [];
  let alice: KubeClient;
  const alicesSubject = () => ({ kind: "ServiceAccount", name: "alice", namespace: ns.name });
  const roleName = () => policy.find((o) => o.kind === "ClusterRole")?.metadata.name as string;

  /**
   * POSTs a Run with `priority` in `namespace` as `who.client`, or with the admin's credentials
   * impersonating `who.as`; returns the HTTP status and the apiserver's message.
   */
  async function create(
    name: string,
    priority: number | undefined,
    who: { client?: KubeClient; as?: string },
    namespace = ns.name,
  ): Promise<{ status: number; message: string }> {
    const run: Run = runManifest(name, "nowhere", priority === undefined ? {} : { priority });
    const conn = (who.client ?? client).conn;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (conn.token) headers.authorization = `Bearer ${conn.token}`;
    if (who.as) headers["Impersonate-User"] = who.as;
    const res = await fetch(`${conn.server}${path(RunResource, namespace)}`, {
      method: "POST",
      headers,
      body: JSON.stringify(run),
      tls: { ca: conn.ca, cert: conn.cert, key: conn.key },
    } as RequestInit);
    const body = (await res.json()) as { message?: string };
    return { status: res.status, message: body.message ?? "" };
  }

  /** Grants `create` on Runs (and nothing about priorities) in `namespace`. */
  async function mayCreateRuns(subject: Record<string, string>, name: string, namespace = ns.name) {
    await client.create(path(R.roles, namespace), {
      metadata: { name },
      rules: [{ apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["create"] }],
    });
    await client.create(path(R.roleBindings, namespace), {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [subject],
    });
  }

  /** Binds the chart's ClusterRole (create on runs/priority) in the test namespace. */
  async function mayUsePriorities(subject: Record<string, string>, name: string) {
    await client.create(path(R.roleBindings, ns.name), {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName() },
      subjects: [subject],
    });
  }

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-prio-policy");
    // Scope Namespace: the binding matches only this test's namespace on the shared cluster.
    policy = (
      await render({ "controller.scope": "Namespace" }, { release: "prio", namespace: ns.name })
    ).filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "run-priority");
    expect(policy.map((o) => o.kind).sort()).toEqual(Object.keys(RESOURCES));
    for (const o of policy) await client.apply(pathOf(o), o, "kruntimes-tests", true);
    await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: "alice" } });
    await mayCreateRuns(alicesSubject(), "alice-runs");
    const tr = await client.create<{ status: { token: string } }>(
      `${path(R.serviceAccounts, ns.name, "alice")}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } },
    );
    alice = new KubeClient({ ...client.conn, cert: undefined, key: undefined, token: tr.status.token });
    await mayCreateRuns(USER_BOB, "bob-runs");
  });

  afterAll(async () => {
    for (const o of policy) await client.delete(pathOf(o)).catch(() => {});
    await ns?.remove();
  });

  test("a ServiceAccount without runs/priority: above 0 refused, saying what to do; 0 and below admitted", async () => {
    // The apiserver loads a new policy asynchronously: wait for the first refusal.
    const refused = await eventually("the policy refuses a high priority", async () => {
      const r = await create(`probe-${Date.now()}`, 5, { client: alice });
      return r.status === 403 ? r : undefined;
    });
    expect(refused.message).toContain("spec.priority 5 is above 0, which needs create on runs/priority");
    expect(refused.message).toContain(`in namespace ${ns.name}`);
    expect(refused.message).toContain(`--clusterrole=${roleName()}`);
    expect(refused.message).toContain("or leave spec.priority at 0 or below");
    expect((await create("sa-default", undefined, { client: alice })).status).toBe(201);
    expect((await create("sa-zero", Priority.unprivilegedMax, { client: alice })).status).toBe(201);
    expect((await create("sa-low", Priority.min, { client: alice })).status).toBe(201);
    expect((await create("sa-one", Priority.unprivilegedMax + 1, { client: alice })).status).toBe(403);
  });

  test("bound to the chart's ClusterRole, the ServiceAccount may use any priority", async () => {
    await mayUsePriorities(alicesSubject(), "alice-priority");
    await eventually(
      "the binding takes effect",
      async () => (await create(`sa-max-${Date.now()}`, Priority.max, { client: alice })).status === 201,
    );
  });

  test("an impersonated user: refused, then admitted once bound", async () => {
    await eventually(
      "the policy is loaded",
      async () => (await create("bob-high", 10, { as: "bob" })).status === 403,
    );
    const denied = await create("bob-high", 10, { as: "bob" });
    expect(denied.message).toContain("spec.priority 10 is above 0");
    expect((await create("bob-zero", 0, { as: "bob" })).status).toBe(201);
    await mayUsePriorities(USER_BOB, "bob-priority");
    await eventually(
      "bob may use priorities",
      async () => (await create(`bob-high-${Date.now()}`, 10, { as: "bob" })).status === 201,
    );
  });

  test("system:masters is never refused; with scope Namespace other namespaces are not bound", async () => {
    expect((await create("admin-high", Priority.max, {})).status).toBe(201);
    const other = await testNamespace(client, "krt-prio-other");
    try {
      await mayCreateRuns(USER_BOB, "bob-runs", other.name);
      await eventually(
        "bob creates a high-priority Run where the policy is not bound",
        async () => (await create(`elsewhere-${Date.now()}`, 7, { as: "bob" }, other.name)).status === 201,
      );
    } finally {
      await other.remove();
    }
  });
});
