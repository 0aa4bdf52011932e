import { describe, expect, test } from "bun:test";
import { paint } from "../output/colour.ts";
import { describeWorkflowRun, renderJobs } from "./describe-text.ts";
import { jobOrder } from "./job-order.ts";
import { fixtureRun, NOW } from "./testdata.ts";

describe("jobOrder", () => {
  test("by depth in the needs DAG, then by name", () => {
    expect(jobOrder(fixtureRun().spec.jobs)).toEqual(["build", "docs", "test", "deploy", "notify"]);
  });
  test("a cycle does not loop", () => {
    expect(jobOrder({ a: { needs: ["b"] }, b: { needs: ["a"] }, c: {} }).sort()).toEqual(["a", "b", "c"]);
  });
});

describe("renderJobs", () => {
  test("the DAG as an aligned tree: jobs with needs, steps with run, duration, exit, reason", () => {
    expect(renderJobs(fixtureRun(), NOW).join("\n")).toBe(
      `
JOB / STEP                          NEEDS        PHASE      DURATION  RUN                            EXIT  REASON
✓ build                                          Succeeded  12s
│   workspace ci-x7k2p-build
│   outputs: digest=sha256:ab12
│   artifact bin: archive, 2048 bytes, s3://artifacts/team/ci-x7k2p-build-compile/bin.tar
├─ ✓ checkout.clone (git-checkout)               Succeeded  2s        ci-x7k2p-build-checkout-clone  0
└─ ✓ compile                                     Succeeded  10s       ci-x7k2p-build-compile         0
      outputs: digest=sha256:ab12
✓ docs                              build        Succeeded  50s       ci-x7k2p-docs
    uses Workflow publish-docs with version=\${{ inputs.version }} → WorkflowRun ci-x7k2p-docs (krt wfrun describe ci-x7k2p-docs)
✗ test                              build        Failed     5s                                             StepFailed: step unit failed
│   workspace ci-x7k2p-test
├─ ✗ unit                                        Failed     5s        ci-x7k2p-test-unit#2           2     NonZeroExit: exit code 2
└─ – lint                                        Skipped
– deploy                            test         Skipped                                                   DependencyFailed: job test did not succeed
└─ ○ push                                        Pending
– notify                            deploy,docs  Skipped                                                   DependencyFailed: job deploy did not succeed
└─ ○ send                                        Pending`.slice(1),
    );
  });

  test("before the controller wrote status: every job and spec step Pending, Action steps named", () => {
    const r = fixtureRun();
    r.status = undefined;
    const text = renderJobs(r, NOW).join("\n");
    expect(text).toContain("├─ ○ checkout (git-checkout)");
    expect(text).toContain("○ docs");
    expect(text).toContain("(nested WorkflowRun not created yet)");
    expect(text).not.toContain("✓");
  });

  test("colours only with a colour Paint; the plain text is the same once the codes are stripped", () => {
    const plain = renderJobs(fixtureRun(), NOW).join("\n");
    const coloured = renderJobs(fixtureRun(), NOW, paint(true)).join("\n");
    expect(plain).not.toContain("\u001b[");
    expect(coloured).toContain("\u001b[32m✓\u001b[39m build");
    expect(coloured).toContain("\u001b[31mFailed\u001b[39m");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping ANSI codes
    expect(coloured.replace(/\u001b\[[0-9]+m/g, "")).toBe(plain);
  });
});

describe("describeWorkflowRun", () => {
  test("header, jobs, outputs, conditions and events", () => {
    const text = describeWorkflowRun(
      fixtureRun(),
      [
        {
          type: "Normal",
          reason: "Created",
          message: "created Run ci-x7k2p-build-compile",
          metadata: { creationTimestamp: "2026-12-03T12:00:03Z" },
        },
      ],
      { nowMs: NOW },
    );
    const lines = text.split("\n");
    expect(lines.slice(0, 11)).toEqual([
      "Name:                 ci-x7k2p",
      "Namespace:            team",
      "Workflow:             ci",
      "Created:              2026-12-03T12:00:00Z (10m ago)",
      "Inputs:               version=1.2 debug=false",
      "Phase:                Failed",
      "Reason:               JobFailed",
      "Message:              job test failed",
      "Started:              2026-12-03T12:00:01Z",
      "Completed:            2026-12-03T12:01:04Z",
      "Duration:             63s",
    ]);
    expect(lines[11]).toBe("Jobs:");
    expect(lines[12]).toStartWith("  JOB / STEP");
    expect(text).toContain(
      "Outputs:\n  <none>\nConditions:\n  TYPE       STATUS   REASON      AGE     MESSAGE\n  Finished   True     JobFailed   8m56s   job test failed",
    );
    expect(text).toContain(
      "Events:\n  TYPE     REASON    AGE     COUNT   MESSAGE\n  Normal   Created   9m57s   1       created Run ci-x7k2p-build-compile",
    );
  });

  test("a cancel in progress, a nested run's parent, run outputs", () => {
    const r = fixtureRun();
    r.spec.termination = { mode: "Immediate" };
    r.metadata.labels = { "kruntimes.io/workflowrun": "outer", "kruntimes.io/workflow-job": "release" };
    r.status = { phase: "Running", outputs: { digest: "sha256:ab12" } };
    const text = describeWorkflowRun(r, [], { nowMs: NOW });
    expect(text).toContain("Parent:               WorkflowRun outer, job release\n");
    expect(text).toContain(
      "Termination:          Immediate (cancelling: running children are stopped, nothing new starts)\n",
    );
    expect(text).toContain("Outputs:\n  digest=sha256:ab12\n");
  });
});
