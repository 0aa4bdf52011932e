import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { TaskExitedSchema, TaskExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";
import { attemptResult } from "./attempt-result.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("attemptResult", () => {
  test("a completed attempt carries exit code, outputs, tails and the server's times", () => {
    const exited = create(TaskExitedSchema, {
      reason: TaskExitReason.COMPLETED,
      exitCode: 0,
      outputs: { answer: "42" },
      stdoutTail: enc("hi\n"),
      startedAtMicros: BigInt(10),
      finishedAtMicros: BigInt(20),
    });
    expect(attemptResult({ kind: "exited", exited }, 99)).toMatchObject({
      outcome: { phase: "Succeeded", reason: "Completed" },
      exitCode: 0,
      outputs: { answer: "42" },
      stdout: { text: "hi\n", truncated: false },
      startedMicros: 10,
      finishedMicros: 20,
    });
  });
  test("outputs the status cannot hold fail a successful attempt with OutputsInvalid", () => {
    const exited = create(TaskExitedSchema, {
      reason: TaskExitReason.COMPLETED,
      exitCode: 0,
      outputs: { "bad name": "x" },
    });
    const r = attemptResult({ kind: "exited", exited }, 1);
    expect(r.outcome).toMatchObject({ phase: "Failed", reason: "OutputsInvalid" });
    expect(r.outputs).toBeUndefined();
  });
  test("a lost attempt fails with PodUnhealthy (retryable by default), a refused one with StartFailed", () => {
    expect(attemptResult({ kind: "lost", message: "gone", startedMicros: 5 }, 9)).toMatchObject({
      outcome: { phase: "Failed", reason: "PodUnhealthy", message: "gone" },
      startedMicros: 5,
      finishedMicros: 9,
    });
    expect(attemptResult({ kind: "refused", message: "bad" }, 9).outcome).toMatchObject({
      reason: "StartFailed",
    });
  });
});
