import { describe, expect, test } from "bun:test";
import type { PersistentWorkspace, Run, WorkflowRun } from "@kruntimes/api";
import { jobWorkspaceName, stepRunName } from "./child-names.ts";
import { type Observed, planWorkflowRun } from "./workflow-plan.ts";

const NOW = "2026-12-03T10:00:00.000Z";

function wfrun(
  spec: Partial<WorkflowRun["spec"]>,
  status: Partial<NonNullable<WorkflowRun["status"]>> = {},
): WorkflowRun {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "WorkflowRun",
    metadata: { name: "wf", namespace: "ns", uid: "uid-1", generation: 1, resourceVersion: "5" },
    spec: { runtime: "bash", jobs: {}, ...spec } as WorkflowRun["spec"],
    status: { phase: "Running", definitions: {}, jobs: {}, ...status },
  };
}

function observed(
  w: WorkflowRun,
  runs: Run[] = [],
  workspaces: PersistentWorkspace[] = [],
  expected: string[] = [],
): Observed {
  return {
    wfrun: w,
    runs: new Map(runs.map((r) => [r.metadata.name ?? "", r])),
    children: new Map(),
    workspaces: new Map(workspaces.map((x) => [x.metadata.name ?? "", x])),
    expected: (n) => expected.includes(n),
    now: NOW,
  };
}

function childRun(name: string, status: Run["status"]): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name, namespace: "ns" },
    spec: { runtime: "bash", mode: { task: {} } },
    status,
  };
}

const twoSteps = {
  jobs: {
    build: {
      env: [{ name: "V", value: "${{ inputs.v }}" }],
      steps: [
        { name: "one", run: "echo v=${{ inputs.v }} >> $KRUNTIME_OUTPUTS", outputs: ["v"] },
        { name: "two", run: "echo ${{ steps.one.outputs.v }}" },
      ],
    },
  },
  inputs: { v: "7" },
};

describe("planWorkflowRun", () => {
  test("child names are deterministic, bounded and distinct per job and step", () => {
    const a = stepRunName("a-very-long-workflow-run-name-that-goes-on", "u", "build", "compile");
    expect(a).toBe(stepRunName("a-very-long-workflow-run-name-that-goes-on", "u", "build", "compile"));
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(a).not.toBe(stepRunName("a-very-long-workflow-run-name-that-goes-on", "u", "build", "compile2"));
    expect(a).not.toBe(stepRunName("a-very-long-workflow-run-name-that-goes-on", "u2", "build", "compile"));
  });

  test("a started job creates its workspace and its first step, with expressions evaluated and workflow env", () => {
    const p = planWorkflowRun(observed(wfrun(twoSteps)));
    expect(p.creates.map((c) => c.kind)).toEqual(["PersistentWorkspace", "Run"]);
    const run = p.creates[1]!.obj as Run;
    expect(run.metadata.name).toBe(stepRunName("wf", "uid-1", "build", "one"));
    expect(run.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "WorkflowRun",
      uid: "uid-1",
      controller: true,
    });
    expect(run.spec.source?.inline).toBe("echo v=7 >> $KRUNTIME_OUTPUTS");
    expect(run.spec.workspace?.name).toBe(jobWorkspaceName("wf", "uid-1", "build"));
    expect(run.spec.env).toEqual([
      { name: "V", value: "7" },
      { name: "KRUNTIME_WORKFLOW_RUN", value: "wf" },
      { name: "KRUNTIME_WORKFLOW_JOB", value: "build" },
      { name: "KRUNTIME_WORKFLOW_STEP", value: "one" },
    ]);
    expect(p.status.jobs?.build).toMatchObject({ phase: "Running", startTime: NOW });
  });

  test("the next step sees the previous step's outputs; a child the informer does not show yet is not 'deleted'", () => {
    const one = stepRunName("wf", "uid-1", "build", "one");
    const w = wfrun(twoSteps);
    const p = planWorkflowRun(observed(w, [childRun(one, { phase: "Succeeded", outputs: { v: "7" } })]));
    const run = p.creates.find((c) => c.kind === "Run")?.obj as Run;
    expect(run.spec.source?.inline).toBe("echo 7");
    // Recorded as created, not in the informer yet, created by this process: still pending.
    const two = stepRunName("wf", "uid-1", "build", "two");
    const w2 = wfrun(twoSteps, {
      jobs: {
        build: {
          phase: "Running",
          steps: [
            { name: "one", run: one, phase: "Succeeded", outputs: { v: "7" } },
            { name: "two", run: two, phase: "Pending" },
          ],
        },
      },
    });
    const fresh = planWorkflowRun(
      observed(w2, [childRun(one, { phase: "Succeeded", outputs: { v: "7" } })], [], [two]),
    );
    expect(fresh.status.jobs?.build?.phase).toBe("Running");
    expect(fresh.creates.filter((c) => c.kind === "Run")).toEqual([]);
    // Not expected any more (another process, or long gone): the child was deleted.
    const gone = planWorkflowRun(observed(w2, [childRun(one, { phase: "Succeeded", outputs: { v: "7" } })]));
    expect(gone.status.jobs?.build).toMatchObject({ phase: "Failed", reason: "StepFailed" });
    expect(gone.status.jobs?.build?.steps?.[1]).toMatchObject({ phase: "Failed", reason: "ChildDeleted" });
  });

  test("a step that succeeds without a declared output fails with OutputMissing", () => {
    const one = stepRunName("wf", "uid-1", "build", "one");
    const p = planWorkflowRun(
      observed(wfrun(twoSteps), [childRun(one, { phase: "Succeeded", outputs: {} })]),
    );
    expect(p.status.jobs?.build?.steps?.[0]).toMatchObject({ phase: "Failed", reason: "OutputMissing" });
    expect(p.status.jobs?.build?.steps?.[0]?.message).toContain('declared output "v"');
    expect(p.status.phase).toBe("Failed");
    expect(p.creates.filter((c) => c.kind === "Run")).toEqual([]);
  });

  test("cancellation before a job starts cancels it without children; a running step is cancelled", () => {
    const one = stepRunName("wf", "uid-1", "build", "one");
    const spec = { ...twoSteps, termination: { mode: "Immediate" as const } };
    const notStarted = planWorkflowRun(observed(wfrun(spec)));
    expect(notStarted.creates).toEqual([]);
    expect(notStarted.status).toMatchObject({ phase: "Cancelled", reason: "Cancelled" });
    const running = planWorkflowRun(observed(wfrun(spec), [childRun(one, { phase: "Running" })]));
    expect(running.cancels).toEqual([{ kind: "Run", name: one }]);
    expect(running.status.phase).toBe("Running");
  });

  test("a value that breaks the called Action's input type at run time fails the step, not the controller", () => {
    const one = stepRunName("wf", "uid-1", "build", "one");
    const w = wfrun(
      {
        jobs: {
          build: {
            steps: [
              { name: "one", run: "true", outputs: ["v"] },
              { name: "two", uses: "count", with: { n: "${{ steps.one.outputs.v }}" } },
            ],
          },
        },
      },
      {
        definitions: {
          actions: { count: { inputs: { n: { type: "number" } }, steps: [{ name: "s", run: "true" }] } },
        },
      },
    );
    const p = planWorkflowRun(observed(w, [childRun(one, { phase: "Succeeded", outputs: { v: "abc" } })]));
    expect(p.status.jobs?.build?.steps?.[1]).toMatchObject({ phase: "Failed", reason: "InvalidWorkflow" });
    expect(p.status.jobs?.build?.steps?.[1]?.message).toContain('"abc" is not a number');
    expect(p.status.jobs?.build).toMatchObject({ phase: "Failed", reason: "InvalidWorkflow" });
    expect(p.creates.filter((c) => c.kind === "Run")).toEqual([]);
  });
});
