/** A WorkflowRun in the middle of its life, as the controller would write it: the fixture of the rendering tests. */
import type { WorkflowRun } from "@kruntimes/api";

export const NOW = Date.parse("2026-12-03T12:10:00Z");

export function fixtureRun(): WorkflowRun {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "WorkflowRun",
    metadata: { name: "ci-x7k2p", namespace: "team", creationTimestamp: "2026-12-03T12:00:00Z" },
    spec: {
      workflowRef: { name: "ci" },
      inputs: { version: "1.2", debug: "false" },
      runtime: "bash",
      jobs: {
        test: {
          needs: ["build"],
          steps: [
            { name: "unit", run: "make test" },
            { name: "lint", run: "make lint" },
          ],
        },
        build: {
          steps: [
            { name: "checkout", uses: "git-checkout", with: { ref: "main" } },
            { name: "compile", run: "make", outputs: ["digest"] },
          ],
          outputs: { digest: "${{ steps.compile.outputs.digest }}" },
        },
        deploy: { needs: ["test"], steps: [{ name: "push", run: "make push" }] },
        docs: { needs: ["build"], uses: "publish-docs", with: { version: "${{ inputs.version }}" } },
        notify: { needs: ["deploy", "docs"], steps: [{ name: "send", run: "echo done" }] },
      },
    },
    status: {
      phase: "Failed",
      reason: "JobFailed",
      message: "job test failed",
      startTime: "2026-12-03T12:00:01Z",
      completionTime: "2026-12-03T12:01:04Z",
      jobs: {
        build: {
          phase: "Succeeded",
          reason: "Succeeded",
          workspace: "ci-x7k2p-build",
          startTime: "2026-12-03T12:00:01Z",
          completionTime: "2026-12-03T12:00:13Z",
          steps: [
            {
              name: "checkout.clone",
              action: "git-checkout",
              run: "ci-x7k2p-build-checkout-clone",
              phase: "Succeeded",
              attempt: 1,
              exitCode: 0,
              startTime: "2026-12-03T12:00:01Z",
              completionTime: "2026-12-03T12:00:03Z",
            },
            {
              name: "compile",
              run: "ci-x7k2p-build-compile",
              phase: "Succeeded",
              attempt: 1,
              exitCode: 0,
              outputs: { digest: "sha256:ab12" },
              startTime: "2026-12-03T12:00:03Z",
              completionTime: "2026-12-03T12:00:13Z",
            },
          ],
          outputs: { digest: "sha256:ab12" },
          artifacts: [
            {
              name: "bin",
              driver: "s3",
              type: "archive",
              location: "s3://artifacts/team/ci-x7k2p-build-compile/bin.tar",
              size: 2048,
            },
          ],
        },
        test: {
          phase: "Failed",
          reason: "StepFailed",
          message: "step unit failed",
          workspace: "ci-x7k2p-test",
          startTime: "2026-12-03T12:00:14Z",
          completionTime: "2026-12-03T12:00:19Z",
          steps: [
            {
              name: "unit",
              run: "ci-x7k2p-test-unit",
              phase: "Failed",
              reason: "NonZeroExit",
              message: "exit code 2",
              attempt: 2,
              exitCode: 2,
              startTime: "2026-12-03T12:00:14Z",
              completionTime: "2026-12-03T12:00:19Z",
            },
            { name: "lint", phase: "Skipped" },
          ],
        },
        deploy: { phase: "Skipped", reason: "DependencyFailed", message: "job test did not succeed" },
        docs: {
          phase: "Succeeded",
          workflowRun: "ci-x7k2p-docs",
          startTime: "2026-12-03T12:00:14Z",
          completionTime: "2026-12-03T12:01:04Z",
        },
        notify: { phase: "Skipped", reason: "DependencyFailed", message: "job deploy did not succeed" },
      },
      conditions: [
        {
          type: "Finished",
          status: "True",
          reason: "JobFailed",
          message: "job test failed",
          lastTransitionTime: "2026-12-03T12:01:04Z",
        },
      ],
    },
  } as WorkflowRun;
}
