/**
 * The chart's artifact-inputs admission policy: what `helm template` renders (a
 * ValidatingAdmissionPolicy and its binding), and, on the local cluster, what the apiserver does
 * with it: a Run with spec.artifactInputs is refused unless its creator may `get` every source Run
 * named there — the refusal names the Runs it may not read — checked for a ServiceAccount token and
 * for an impersonated user — and where the apiserver's CEL cost budget ends: one check covers a
 * requester who may get every Run, one check per distinct Run otherwise (27 fit; past that the
 * policy refuses).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ArtifactInput, Limits, type Run, RunResource } from "@kruntimes/api";
import { KubeClient, path, R } from "@kruntimes/kube";
import { installCrds, runManifest } from "../../controller/testing/cluster/objects.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { CHART, find, HELM_MISSING, helm, helmPath, type K8sObject, render } from "./chart-support.ts";

const available = helmPath() !== undefined;
if (!available && process.env.KUBECONFIG) throw new Error(HELM_MISSING);
const suite = available ? describe : describe.skip;

const NAME = "team-a-kr-kruntimes-run-artifact-inputs";
const COMPONENT = "run-artifact-inputs";

suite("chart: artifact-inputs admission policy (helm template)", () => {
  test("defaults: the policy checks get on each source Run, bound for every namespace", async () => {
    const objs = await render({}, { release: "kr", namespace: "team-a" });
    const policy = find(objs, "ValidatingAdmissionPolicy", NAME);
    expect(policy.spec.failurePolicy).toBe("Fail");
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ["kruntimes.io"], apiVersions: ["*"], operations: ["CREATE"], resources: ["runs"] },
    ]);
    expect(policy.spec.matchConditions[0].expression).toContain("has(object.spec.artifactInputs)");
    const anyRun = policy.spec.variables.find((v: { name: string }) => v.name === "getsAnyRun");
    expect(anyRun.expression).toBe(
      "authorizer.group('kruntimes.io').resource('runs').namespace(request.namespace).check('get').allowed()",
    );
    // One validation per input a Run may list (the API's limit), each checking that input's Run.
    const vs = policy.spec.validations as { expression: string; messageExpression: string; reason: string }[];
    expect(vs).toHaveLength(Limits.artifactCount);
    vs.forEach((v, i) => {
      expect(v.expression).toBe(
        `size(variables.inputs) <= ${i} || variables.getsAnyRun || variables.runs.indexOf(variables.runs[${i}]) < ${i} || authorizer.group('kruntimes.io').resource('runs').namespace(request.namespace).name(variables.runs[${i}]).check('get').allowed()`,
      );
      expect(v.messageExpression).toContain(`'spec.artifactInputs[${i}] stages an artifact of run '`);
      expect(v.reason).toBe("Forbidden");
    });
    expect(find(objs, "ValidatingAdmissionPolicyBinding", NAME).spec).toEqual({
      policyName: NAME,
      validationActions: ["Deny"],
    });
    expect(objs.filter((o) => o.kind === "ClusterRole" && o.metadata.name === NAME)).toEqual([]);
  });

  test("controller.scope=Namespace binds it to the release namespace only; admissionPolicy=false renders none", async () => {
    const scoped = await render({ "controller.scope": "Namespace" }, { release: "kr", namespace: "team-a" });
    expect(find(scoped, "ValidatingAdmissionPolicyBinding", NAME).spec.matchResources).toEqual({
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "team-a" } },
    });
    const off = await render(
      { "artifactInputs.admissionPolicy": "false" },
      { release: "kr", namespace: "team-a" },
    );
    expect(off.filter((o) => o.metadata.name === NAME)).toEqual([]);
  });

  test("a misspelt key under artifactInputs fails the schema", async () => {
    const r = await helm(["template", "kr", CHART, "--set", "artifactInputs.admisionPolicy=true"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("admisionPolicy");
  });
});

const cluster = testCluster();
const live = available && cluster?.local ? describe : describe.skip;

const RESOURCES: Record<string, { group: string; version: string; plural: string }> = {
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

live("chart: artifact-inputs admission policy on the apiserver", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let policy: K8sObject[] = [];
  let alice: KubeClient;
  let n = 0;

  /** POSTs a Run staging `inputs` as `who`; returns the HTTP status and the apiserver's message. */
  async function create(
    inputs: ArtifactInput[],
    who: { client?: KubeClient; as?: string },
  ): Promise<{ status: number; message: string }> {
    const run: Run = runManifest(`r${n++}-${Date.now()}`, "nowhere", { artifactInputs: inputs });
    const conn = (who.client ?? client).conn;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    if (conn.token) headers.authorization = `Bearer ${conn.token}`;
    if (who.as) headers["Impersonate-User"] = who.as;
    const res = await fetch(`${conn.server}${path(RunResource, ns.name)}`, {
      method: "POST",
      headers,
      body: JSON.stringify(run),
      tls: { ca: conn.ca, cert: conn.cert, key: conn.key },
    } as RequestInit);
    const body = (await res.json()) as { message?: string };
    return { status: res.status, message: body.message ?? "" };
  }

  /** A Role with `rules` bound to `subject` in the test namespace. */
  async function grant(name: string, subject: Record<string, string>, rules: Record<string, unknown>[]) {
    await client.create(path(R.roles, ns.name), { metadata: { name }, rules });
    await client.create(path(R.roleBindings, ns.name), {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [subject],
    });
  }
  const createRuns = { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["create"] };

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-inputs-policy");
    policy = (
      await render({ "controller.scope": "Namespace" }, { release: "inputs", namespace: ns.name })
    ).filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === COMPONENT);
    expect(policy.map((o) => o.kind).sort()).toEqual(Object.keys(RESOURCES));
    for (const o of policy) await client.apply(pathOf(o), o, "kruntimes-tests", true);
    await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: "alice" } });
    // alice may create Runs and read the Runs "shared" and src-0 … src-31 only.
    const named = ["shared", ...Array.from({ length: Limits.artifactCount }, (_, i) => `src-${i}`)];
    await grant("alice", { kind: "ServiceAccount", name: "alice", namespace: ns.name }, [
      createRuns,
      { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get"], resourceNames: named },
    ]);
    const tr = await client.create<{ status: { token: string } }>(
      `${path(R.serviceAccounts, ns.name, "alice")}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } },
    );
    alice = new KubeClient({ ...client.conn, cert: undefined, key: undefined, token: tr.status.token });
    await grant("bob", { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bob" }, [createRuns]);
  });

  afterAll(async () => {
    for (const o of policy) await client.delete(pathOf(o)).catch(() => {});
    await ns?.remove();
  });

  test("a ServiceAccount: inputs from a Run it may get admitted; from one it may not, refused naming it", async () => {
    // The apiserver loads a new policy asynchronously: wait for the first refusal.
    const refused = await eventually("the policy refuses", async () => {
      const r = await create([{ run: "secret", name: "key" }], { client: alice });
      return r.status === 403 ? r : undefined;
    });
    expect(refused.message).toContain(
      `spec.artifactInputs[0] stages an artifact of run secret, which needs get on that run (group kruntimes.io) in namespace ${ns.name}: ask for a Role that grants it (the built-in view role does), or leave that input out`,
    );
    expect((await create([{ run: "shared", name: "out" }], { client: alice })).status).toBe(201);
    const mixed = await create(
      [
        { run: "shared", name: "out" },
        { run: "secret", name: "key" },
      ],
      { client: alice },
    );
    expect(mixed.status).toBe(403);
    expect(mixed.message).toContain("spec.artifactInputs[1] stages an artifact of run secret,");
    // Runs without inputs are not this policy's business.
    expect((await create([], { client: alice })).status).toBe(201);
  });

  test("an impersonated user without get: refused; admitted once a Role grants it", async () => {
    await eventually(
      "the policy is loaded",
      async () => (await create([{ run: "shared", name: "out" }], { as: "bob" })).status === 403,
    );
    await grant("bob-read", { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bob" }, [
      { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get"] },
    ]);
    await eventually(
      "bob may stage",
      async () => (await create([{ run: "shared", name: "out" }], { as: "bob" })).status === 201,
    );
  });

  test("the apiserver's cost budget: what fits, and past it the policy fails closed", async () => {
    const from = (runs: number, of: number = Limits.artifactCount) =>
      Array.from({ length: of }, (_, i) => ({ run: `src-${i % runs}`, name: `o${i}` }));
    // get on every Run of the namespace: one check answers for all 32 inputs.
    expect(await create(from(Limits.artifactCount), { as: "bob" })).toEqual({ status: 201, message: "" });
    // get on named Runs only: one check per distinct Run — 32 inputs from one Run are one check,
    expect(await create(from(1), { client: alice })).toEqual({ status: 201, message: "" });
    // 27 distinct Runs fit the budget, 28 do not (refused, never let through).
    expect((await create(from(27, 27), { client: alice })).status).toBe(201);
    const over = await create(from(28, 28), { client: alice });
    expect(over.status).toBe(422);
    expect(over.message).toContain("running out of cost budget");
  });
});
