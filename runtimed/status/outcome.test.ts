import { describe, expect, test } from "bun:test";
import { Limits } from "@kruntimes/api";
import { TaskExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";
import { outcomeOf } from "./outcome.ts";
import { boundMessage, checkOutputs, fitTail, TRUNCATION_MARKER } from "./tails.ts";

const exited = (
  reason: TaskExitReason,
  o: { exitCode?: number; signal?: string; message?: string } = {},
) => ({
  reason,
  exitCode: o.exitCode,
  signal: o.signal ?? "",
  message: o.message ?? "",
});

describe("outcomeOf", () => {
  const cases: [string, ReturnType<typeof exited>, string, string][] = [
    ["exit 0", exited(TaskExitReason.COMPLETED, { exitCode: 0 }), "Succeeded", "Completed"],
    ["exit 3", exited(TaskExitReason.COMPLETED, { exitCode: 3 }), "Failed", "NonZeroExit"],
    ["signal", exited(TaskExitReason.COMPLETED, { signal: "SIGKILL" }), "Failed", "Signaled"],
    ["timeout", exited(TaskExitReason.TIMEOUT, { signal: "SIGTERM" }), "Timeout", "Timeout"],
    ["cancelled", exited(TaskExitReason.CANCELLED, { signal: "SIGTERM" }), "Cancelled", "Cancelled"],
    ["outputs invalid", exited(TaskExitReason.OUTPUTS_INVALID, { exitCode: 0 }), "Failed", "OutputsInvalid"],
    [
      "start failed",
      exited(TaskExitReason.START_FAILED, { message: "no such file" }),
      "Failed",
      "StartFailed",
    ],
    ["internal", exited(TaskExitReason.INTERNAL), "Failed", "PodUnhealthy"],
  ];
  for (const [name, e, phase, reason] of cases)
    test(name, () => expect(outcomeOf(e)).toMatchObject({ phase, reason }));

  test("messages say what happened", () => {
    expect(outcomeOf(exited(TaskExitReason.COMPLETED, { exitCode: 3 })).message).toContain("code 3");
    expect(outcomeOf(exited(TaskExitReason.COMPLETED, { signal: "SIGSEGV" })).message).toContain("SIGSEGV");
    expect(outcomeOf(exited(TaskExitReason.START_FAILED, { message: "no such file" })).message).toBe(
      "no such file",
    );
  });
});

describe("fitTail", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  test("short tails pass through with their flag", () => {
    expect(fitTail(bytes("hi\n"), false)).toEqual({ text: "hi\n", truncated: false });
    expect(fitTail(bytes("hi\n"), true)).toEqual({ text: "hi\n", truncated: true });
  });
  test("long tails keep the end, fit the limit and set the flag", () => {
    const t = fitTail(bytes("x".repeat(100) + "END"), false, 40);
    expect(t.text.length).toBe(40);
    expect(t.text.startsWith(TRUNCATION_MARKER)).toBe(true);
    expect(t.text.endsWith("xEND")).toBe(true);
    expect(t.truncated).toBe(true);
  });
  test("multi-byte characters count as characters", () => {
    const t = fitTail(bytes("é".repeat(Limits.tailLength)), false);
    expect(t).toEqual({ text: "é".repeat(Limits.tailLength), truncated: false });
  });
});

describe("checkOutputs", () => {
  test("valid outputs are kept", () =>
    expect(checkOutputs({ a: "1", "b.c-d": "" })).toEqual({ ok: true, outputs: { a: "1", "b.c-d": "" } }));
  test("bad names, long values and too many keys are refused with a message", () => {
    expect(checkOutputs({ "1a": "x" })).toMatchObject({
      ok: false,
      message: expect.stringContaining("invalid"),
    });
    expect(checkOutputs({ a: "x".repeat(Limits.outputValueLength + 1) })).toMatchObject({ ok: false });
    const many = Object.fromEntries(Array.from({ length: Limits.outputCount + 1 }, (_, i) => [`k${i}`, "v"]));
    expect(checkOutputs(many)).toMatchObject({ ok: false, message: expect.stringContaining("outputs") });
  });
  test("messages are bounded", () =>
    expect(boundMessage("m".repeat(10_000)).length).toBe(Limits.messageLength));
});
