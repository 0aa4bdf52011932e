import { describe, expect, test } from "bun:test";
import type { WorkflowJob } from "./workflow.ts";
import {
  bindInputs,
  resolveDefinitions,
  topologicalOrder,
  upstreamJobs,
  validateActionSpec,
  validateWorkflowRunSpec,
  WorkflowInvalid,
} from "./workflow-validate.ts";

const run = (name: string, script = "true", extra: object = {}) => ({ name, run: script, ...extra });
const messages = (issues: { path: string; message: string }[]) =>
  issues.map((i) => `${i.path}: ${i.message}`);

describe("job graph", () => {
  test("orders jobs after what they need and lists everything upstream", () => {
    const jobs = { c: { needs: ["b"] }, b: { needs: ["a"] }, a: {}, d: { needs: ["a"] } };
    const order = topologicalOrder(jobs);
    expect(order.indexOf("a")).toBeLessThan(order.indexOf("b"));
    expect(order.indexOf("b")).toBeLessThan(order.indexOf("c"));
    expect([...upstreamJobs(jobs).get("c")!].sort()).toEqual(["a", "b"]);
  });

  test("names the cycle", () => {
    expect(() => topologicalOrder({ a: { needs: ["c"] }, b: { needs: ["a"] }, c: { needs: ["b"] } })).toThrow(
      "jobs form a cycle: a → c → b → a",
    );
  });
});

describe("validateWorkflowRunSpec", () => {
  const ok = (jobs: Record<string, WorkflowJob>, extra: object = {}) =>
    messages(validateWorkflowRunSpec({ runtime: "bash", jobs, ...extra }));

  test("a well-formed run has no issues", () => {
    expect(
      ok(
        {
          build: {
            steps: [run("compile", "echo v=${{ inputs.v }}", { outputs: ["digest"], artifacts: ["app"] })],
            outputs: { digest: "${{ steps.compile.outputs.digest }}" },
          },
          test: {
            needs: ["build"],
            artifacts: [{ from: "jobs.build.artifacts.app" }],
            steps: [run("t", "test ${{ jobs.build.outputs.digest }}")],
          },
        },
        { inputs: { v: "1" }, outputs: { d: "${{ jobs.build.outputs.digest }}" } },
      ),
    ).toEqual([]);
  });

  test("rejects cycles, references out of scope and undeclared outputs and artifacts", () => {
    expect(ok({ a: { needs: ["b"], steps: [run("s")] }, b: { needs: ["a"], steps: [run("s")] } })).toEqual([
      "spec.jobs.a.needs: jobs form a cycle: a → b → a",
    ]);
    expect(
      ok({
        a: { steps: [run("s1", "${{ steps.s2.outputs.x }}"), run("s2", "", { outputs: ["x"] })] },
        b: { steps: [run("s", "${{ jobs.a.outputs.y }} ${{ inputs.missing }}")] },
        c: {
          needs: ["a"],
          artifacts: [{ from: "jobs.a.artifacts.none" }, { from: "jobs.b.artifacts.x" }],
          steps: [run("s", "${{ jobs.a.outputs.nope }}")],
        },
      }).sort(),
    ).toEqual(
      [
        'spec.jobs.a.steps[0].run: ${{ steps.s2.outputs.x }}: step "s2" is not an earlier step of this job',
        'spec.jobs.b.steps[0].run: ${{ jobs.a.outputs.y }}: job "a" is not upstream of this job: add it to `needs`',
        'spec.jobs.b.steps[0].run: ${{ inputs.missing }}: no input "missing": none are declared or given',
        'spec.jobs.c.artifacts[0].from: no step of job "a" declares artifact "none" (list it in the step\'s `artifacts`)',
        'spec.jobs.c.artifacts[1].from: job "b" is not upstream of this job: add it to `needs`',
        'spec.jobs.c.steps[0].run: ${{ jobs.a.outputs.nope }}: job "a" has no output "nope"',
      ].sort(),
    );
  });

  test("checks `with` against the called Action's inputs when the definition is known", () => {
    const issues = validateWorkflowRunSpec({
      runtime: "bash",
      jobs: { a: { steps: [{ name: "u", uses: "greet", with: { nam: "x", count: "many" } }] } },
      definitions: {
        actions: {
          greet: {
            inputs: { name: { required: true }, count: { type: "number" } },
            steps: [run("s", "echo ${{ inputs.name }}")],
          },
        },
      },
    });
    expect(messages(issues).sort()).toEqual(
      [
        'spec.jobs.a.steps[0].with.nam: Action greet has no input "nam" (inputs: count, name)',
        'spec.jobs.a.steps[0].with.count: "many" is not a number',
        'spec.jobs.a.steps[0].with: Action greet needs input "name"',
      ].sort(),
    );
  });
});

describe("inputs and Actions", () => {
  test("bindInputs fills defaults and refuses unknown, missing and mistyped values", () => {
    const decls = {
      v: { required: true },
      n: { type: "number" as const, default: "3" },
      b: { type: "boolean" as const },
    };
    expect(bindInputs({ v: "x" }, decls, "Workflow w")).toEqual({ v: "x", n: "3" });
    expect(() => bindInputs({ n: "x", b: "yes", z: "1" }, decls, "Workflow w")).toThrow(WorkflowInvalid);
    try {
      bindInputs({ n: "x", b: "yes", z: "1" }, decls, "Workflow w");
    } catch (e) {
      expect(messages((e as WorkflowInvalid).issues).sort()).toEqual(
        [
          'with.z: Workflow w has no input "z" (inputs: b, n, v)',
          'with.n: "x" is not a number',
          'with.b: "yes" is not true or false',
          'with: Workflow w needs input "v"',
        ].sort(),
      );
    }
  });

  test("an Action's expressions see its inputs and earlier steps only", () => {
    expect(
      messages(
        validateActionSpec({
          inputs: { a: {} },
          steps: [
            run("one", "${{ inputs.b }}", { outputs: ["o"] }),
            run("two", "${{ steps.one.outputs.o }}"),
          ],
          outputs: { x: "${{ steps.two.outputs.o }}" },
        }),
      ),
    ).toEqual([
      'spec.steps[0].run: ${{ inputs.b }}: no input "b" (inputs: a)',
      'spec.outputs.x: ${{ steps.two.outputs.o }}: step "two" declares no outputs (list them in its `outputs`)',
    ]);
  });
});

describe("resolveDefinitions", () => {
  const wf = (uses?: string) => ({
    jobs: { j: uses ? { uses } : { runtime: "bash", steps: [{ name: "s", run: "true" }] } },
  });

  test("freezes every reachable Workflow and Action", async () => {
    const r = await resolveDefinitions(
      { a: { uses: "w1" }, b: { runtime: "bash", steps: [{ name: "s", uses: "act" }] } },
      {},
      async (n) => ({ w1: wf("w2"), w2: wf() })[n],
      async (n) => (n === "act" ? { steps: [{ name: "x", run: "true" }] } : undefined),
      0,
    );
    expect("definitions" in r && Object.keys(r.definitions.workflows!).sort()).toEqual(["w1", "w2"]);
    expect("definitions" in r && Object.keys(r.definitions.actions!)).toEqual(["act"]);
  });

  test("refuses cycles through Workflows, missing definitions and depth", async () => {
    const fetch = async (n: string) => ({ a: wf("b"), b: wf("a"), deep: wf("deep2"), deep2: wf() })[n];
    expect(await resolveDefinitions({ j: { uses: "a" } }, {}, fetch, async () => undefined, 0)).toEqual({
      reason: "InvalidWorkflow",
      message: "Workflows call each other in a cycle: (this run) → a → b → a",
    });
    expect(await resolveDefinitions({ j: { uses: "zz" } }, {}, fetch, async () => undefined, 0)).toEqual({
      reason: "DefinitionNotFound",
      message: 'Workflow "zz" not found in the namespace',
    });
    expect(
      await resolveDefinitions({ j: { uses: "deep" } }, {}, fetch, async () => undefined, 3),
    ).toMatchObject({
      reason: "DepthExceeded",
    });
  });
});
