import { describe, expect, test } from "bun:test";
import type { PersistentWorkspace } from "@kruntimes/api";
import { aWorkspace } from "../testing/workspace-fixtures.ts";
import { type AdmissionDeps, type AdmissionRequest, review, type UserInfo } from "./admission.ts";

const CONTROLLER = "system:serviceaccount:kruntimes:kruntimes-controller";

function deps(grants: string[], workspaces: PersistentWorkspace[] = [], fail = false) {
  const asked: { user: UserInfo; namespace: string; verb: string; name: string }[] = [];
  const d: AdmissionDeps = {
    controllerUser: CONTROLLER,
    async access(user, namespace, verb, name) {
      if (fail) throw new Error("connection refused");
      asked.push({ user, namespace, verb, name });
      return grants.includes(`${user.username}:${namespace}/${name}`);
    },
    async workspace(namespace, name) {
      return workspaces.find((w) => w.metadata.namespace === namespace && w.metadata.name === name);
    },
  };
  return { d, asked };
}

function runCreate(username: string, workspace?: string, groups?: string[]): AdmissionRequest {
  return {
    uid: "req-1",
    resource: { group: "kruntimes.io", version: "v1alpha1", resource: "runs" },
    operation: "CREATE",
    namespace: "ns",
    userInfo: { username, ...(groups ? { groups } : {}) },
    object: {
      metadata: { generateName: "r-", namespace: "ns" },
      spec: { runtime: "bash", mode: { task: {} }, ...(workspace ? { workspace: { name: workspace } } : {}) },
    },
  };
}

const managed = aWorkspace({ name: "wf", labels: { "app.kubernetes.io/managed-by": "kruntimes" } });

describe("workspace admission", () => {
  test("a user allowed `use` on persistentworkspaces/<name> may create the Run; the review carries who they are", async () => {
    const { d, asked } = deps(["alice:ns/data"]);
    expect(await review(runCreate("alice", "data", ["team", "system:authenticated"]), d)).toEqual({
      uid: "req-1",
      allowed: true,
    });
    expect(asked).toEqual([
      {
        user: { username: "alice", groups: ["team", "system:authenticated"] },
        namespace: "ns",
        verb: "use",
        name: "data",
      },
    ]);
  });

  test("another user, or another workspace name, is refused with what to grant", async () => {
    const { d } = deps(["alice:ns/data"]);
    const bob = await review(runCreate("bob", "data"), d);
    expect(bob.allowed).toBe(false);
    expect(bob.status).toEqual({
      code: 403,
      reason: "Forbidden",
      message:
        'user "bob" may not use PersistentWorkspace "data" in namespace "ns": a Run naming a workspace needs the verb "use" on persistentworkspaces/data (apiGroups: [kruntimes.io], resources: [persistentworkspaces], resourceNames: [data], verbs: [use]); ask an administrator of the namespace for it',
    });
    expect((await review(runCreate("alice", "other"), d)).allowed).toBe(false);
  });

  test("Runs without a workspace, other operations and other resources are not checked", async () => {
    const { d, asked } = deps([]);
    expect((await review(runCreate("bob"), d)).allowed).toBe(true);
    expect((await review({ ...runCreate("bob", "data"), operation: "UPDATE" }, d)).allowed).toBe(true);
    expect((await review({ ...runCreate("bob", "data"), subResource: "status" }, d)).allowed).toBe(true);
    expect(asked).toEqual([]);
  });

  test("the controller's own Runs pass only for workspaces it manages, without a review", async () => {
    const { d, asked } = deps([], [managed, aWorkspace({ name: "data" })]);
    expect((await review(runCreate(CONTROLLER, "wf"), d)).allowed).toBe(true);
    const foreign = await review(runCreate(CONTROLLER, "data"), d);
    expect(foreign.allowed).toBe(false);
    expect(foreign.status?.message).toContain('PersistentWorkspace "data" in namespace "ns" is not one');
    expect((await review(runCreate(CONTROLLER, "missing"), d)).status?.message).toContain("does not exist");
    expect(asked).toEqual([]);
  });

  test("the managed-by label on a workspace is the controller's to set, nobody else's", async () => {
    const { d } = deps([]);
    const req = (username: string, op: "CREATE" | "UPDATE", old?: PersistentWorkspace): AdmissionRequest => ({
      uid: "req-2",
      resource: { group: "kruntimes.io", version: "v1alpha1", resource: "persistentworkspaces" },
      operation: op,
      namespace: "ns",
      userInfo: { username },
      object: managed,
      ...(old ? { oldObject: old } : {}),
    });
    expect((await review(req("alice", "CREATE"), d)).status?.message).toContain(
      "reserved for the kruntimes controller",
    );
    expect((await review(req("alice", "UPDATE", aWorkspace({ name: "wf" })), d)).allowed).toBe(false);
    expect((await review(req(CONTROLLER, "CREATE"), d)).allowed).toBe(true);
    // Already managed: other edits (spec.released, …) are not the webhook's business.
    expect((await review(req("alice", "UPDATE", managed), d)).allowed).toBe(true);
    const plain = { ...req("alice", "CREATE"), object: aWorkspace({ name: "mine" }) };
    expect((await review(plain, d)).allowed).toBe(true);
  });

  test("a review that cannot be made refuses (fail closed) and says to retry", async () => {
    const { d } = deps([], [], true);
    const r = await review(runCreate("alice", "data"), d);
    expect(r).toMatchObject({ allowed: false, status: { code: 500 } });
    expect(r.status?.message).toBe(
      "could not check PersistentWorkspace access (connection refused); try again",
    );
  });
});

describe("workflow admission", () => {
  const wfReq = (
    resource: "workflowruns" | "workflows" | "actions",
    spec: unknown,
    username = "alice",
    operation: "CREATE" | "UPDATE" = "CREATE",
  ): AdmissionRequest => ({
    uid: "req-2",
    resource: { group: "kruntimes.io", version: "v1alpha1", resource },
    operation,
    namespace: "ns",
    userInfo: { username },
    object: { metadata: { name: "x", namespace: "ns" }, spec },
  });
  const grantsRuns = (users: string[]) => {
    const asked: string[] = [];
    const d: AdmissionDeps = {
      controllerUser: CONTROLLER,
      async access(user, namespace, verb, name, resource) {
        asked.push(`${user.username} ${verb} ${resource}/${name || "*"} in ${namespace}`);
        return users.includes(user.username) && verb === "create" && resource === "runs";
      },
      async workspace() {
        return undefined;
      },
    };
    return { d, asked };
  };
  const cycle = {
    runtime: "bash",
    jobs: {
      a: { needs: ["b"], steps: [{ name: "s", run: "true" }] },
      b: { needs: ["a"], steps: [{ name: "s", run: "true" }] },
    },
  };

  test("a WorkflowRun whose graph has a cycle is refused (422) with the cycle named, before any access check", async () => {
    const { d, asked } = grantsRuns(["alice"]);
    const res = await review(wfReq("workflowruns", cycle), d);
    expect(res).toEqual({
      uid: "req-2",
      allowed: false,
      status: {
        code: 422,
        reason: "Invalid",
        message: "invalid workflowruns: spec.jobs.a.needs: jobs form a cycle: a → b → a",
      },
    });
    expect(asked).toEqual([]);
  });

  test("a valid WorkflowRun needs its creator to be allowed to create Runs in the namespace", async () => {
    const ok = { runtime: "bash", jobs: { a: { steps: [{ name: "s", run: "echo ${{ workflow.name }}" }] } } };
    const { d, asked } = grantsRuns(["alice"]);
    expect(await review(wfReq("workflowruns", ok), d)).toEqual({ uid: "req-2", allowed: true });
    const bob = await review(wfReq("workflowruns", ok, "bob"), d);
    expect(bob.allowed).toBe(false);
    expect(bob.status?.message).toBe(
      'user "bob" may not create WorkflowRuns in namespace "ns" without being allowed to create Runs there (its steps are Runs): ask an administrator of the namespace for create on runs.kruntimes.io',
    );
    expect(asked).toEqual(["alice create runs/* in ns", "bob create runs/* in ns"]);
    // The controller creates nested WorkflowRuns for `uses:` jobs without being asked about.
    expect((await review(wfReq("workflowruns", ok, CONTROLLER), d)).allowed).toBe(true);
    // Updates (cancellation) are only validated.
    expect((await review(wfReq("workflowruns", ok, "bob", "UPDATE"), d)).allowed).toBe(true);
  });

  test("Workflows and Actions are validated: scopes of references and Actions calling Actions", async () => {
    const { d } = grantsRuns([]);
    const wf = await review(
      wfReq("workflows", {
        runtime: "bash",
        inputs: { v: {} },
        jobs: { a: { steps: [{ name: "s", run: "echo ${{ inputs.w }}" }] } },
      }),
      d,
    );
    expect(wf.status?.message).toBe(
      'invalid workflows: spec.jobs.a.steps[0].run: ${{ inputs.w }}: no input "w" (inputs: v)',
    );
    const action = await review(wfReq("actions", { steps: [{ name: "s", uses: "other" }] }), d);
    expect(action.status?.message).toBe(
      "invalid actions: spec.steps[0].uses: an Action cannot call an Action",
    );
  });
});
