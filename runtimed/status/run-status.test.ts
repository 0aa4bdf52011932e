import { describe, expect, test } from "bun:test";
import { Reason, type Run, RunPhase } from "@kruntimes/api";
import { fencedStatusPatch, retryStatus, runningPatch, terminalStatus } from "./run-status.ts";

const NOW = 1_800_000_000_000;
function run(): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "r", namespace: "ns", uid: "u1", generation: 1 },
    spec: { runtime: "bash", mode: { task: { args: ["true"] } } },
    status: {
      phase: RunPhase.Scheduled,
      attempt: 1,
      assignment: { pod: "p", podUID: "pu", attempt: 1 },
      timing: { createdMicros: 1, scheduledMicros: 2 },
      conditions: [
        {
          type: "Scheduled",
          status: "True",
          reason: "Scheduled",
          message: "bound",
          lastTransitionTime: "t0",
        },
      ],
    },
  } as Run;
}

describe("patches", () => {
  test("Running tests phase Scheduled so a late one cannot undo the terminal write", () => {
    const ops = runningPatch("pu", 2, 123);
    expect(ops).toContainEqual({ op: "test", path: "/status/phase", value: "Scheduled" });
    expect(ops).toContainEqual({ op: "add", path: "/status/timing/startedMicros", value: 123 });
  });
  test("a phase-fenced write tests the phase it decided on (null when there was none) before replacing /status", () => {
    expect(fencedStatusPatch("pu", 3, RunPhase.Ready, {})).toEqual([
      { op: "test", path: "/status/assignment/podUID", value: "pu" },
      { op: "test", path: "/status/attempt", value: 3 },
      { op: "test", path: "/status/phase", value: "Ready" },
      { op: "add", path: "/status", value: {} },
    ]);
    expect(fencedStatusPatch("pu", 3, undefined, {})[2]).toEqual({
      op: "test",
      path: "/status/phase",
      value: null,
    });
  });
});

describe("terminalStatus", () => {
  test("keeps assignment and timing, adds results, timing and a Finished condition", () => {
    const s = terminalStatus(
      run(),
      {
        outcome: {
          phase: RunPhase.Failed,
          reason: Reason.NonZeroExit,
          message: "the task exited with code 3",
        },
        exitCode: 3,
        outputs: { a: "1" },
        stdout: { text: "out\n", truncated: false },
        stderr: { text: "", truncated: false },
        startedMicros: 10,
        finishedMicros: 20,
      },
      30,
      NOW,
    );
    expect(s).toMatchObject({
      phase: "Failed",
      reason: "NonZeroExit",
      exitCode: 3,
      attempt: 1,
      assignment: { pod: "p", podUID: "pu", attempt: 1 },
      outputs: { a: "1" },
      stdoutTail: "out\n",
      stdoutTruncated: false,
      timing: {
        createdMicros: 1,
        scheduledMicros: 2,
        startedMicros: 10,
        finishedMicros: 20,
        reportedMicros: 30,
      },
      observedGeneration: 1,
    });
    expect(s.stderrTail).toBeUndefined();
    expect(s.conditions?.map((c) => c.type)).toEqual(["Scheduled", "Finished"]);
    expect(s.conditions?.[1]).toMatchObject({ status: "True", reason: "NonZeroExit" });
  });
  test("drops values the schema would reject instead of failing the write", () => {
    const s = terminalStatus(
      run(),
      {
        outcome: { phase: RunPhase.Failed, reason: Reason.Signaled, message: "" },
        signal: "weird",
        finishedMicros: 1,
      },
      2,
      NOW,
    );
    expect(s.signal).toBeUndefined();
    expect(s.timing?.startedMicros).toBeUndefined();
  });
});

describe("retryStatus", () => {
  test("bumps attempt and assignment.attempt together, due after the backoff", () => {
    const s = retryStatus(
      run(),
      { phase: RunPhase.Failed, reason: Reason.NonZeroExit, message: "the task exited with code 1" },
      1,
      5_000_000,
      2000,
      NOW,
    );
    expect(s).toMatchObject({
      phase: "Scheduled",
      attempt: 2,
      assignment: { pod: "p", podUID: "pu", attempt: 2 },
      reason: "NonZeroExit",
      timing: { createdMicros: 1, scheduledMicros: 5_000_000 },
    });
    expect(s.message).toContain("attempt 1 ended NonZeroExit");
    expect(s.exitCode).toBeUndefined();
  });
});
