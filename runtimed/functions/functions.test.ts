import { describe, expect, test } from "bun:test";
import { FUNCTION_FINALIZER, FunctionLimits, type Run, RunPhase } from "@kruntimes/api";
import { FunctionEndReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import { addFinalizerPatch, removeFinalizerPatch } from "./finalizer.ts";
import { endVerdict } from "./function-outcome.ts";
import { functionTerminalStatus, podFacts, readyStatus } from "./function-status.ts";
import { FunctionTable } from "./function-table.ts";
import { registerRequest } from "./register-request.ts";

function fn(
  spec: Partial<NonNullable<Run["spec"]["mode"]["function"]>> = {},
  extra: Partial<Run["spec"]> = {},
): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "f", namespace: "ns", uid: "u1", generation: 1 },
    spec: {
      runtime: "python",
      mode: { function: { handler: "handle", ...spec } },
      source: { inline: "def handle(r):\n  return 'ok'\n" },
      env: [{ name: "A", value: "1" }],
      ...extra,
    },
    status: {
      phase: RunPhase.Scheduled,
      attempt: 2,
      assignment: { pod: "p", podUID: "pu", attempt: 2 },
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

describe("registerRequest", () => {
  test("source, handler, env, concurrency, limits (API durations) and a per-Run working dir", () => {
    const r = registerRequest(
      fn({ concurrency: 4, idleTimeout: "1m30s", invocationTimeout: "250ms", maxRequestBytes: 100 }),
      2,
    );
    expect(r).toMatchObject({
      runUid: "u1",
      runName: "f",
      attempt: 2,
      source: "def handle(r):\n  return 'ok'\n",
      handler: "handle",
      env: { A: "1" },
      concurrency: 4,
      queueLimit: FunctionLimits.defaultQueueLimit,
      maxRequestBytes: 100,
      maxResponseBytes: 0,
      invocationTimeoutMs: 250,
      idleTimeoutMs: 90_000,
      workingDir: "u1/fn",
    });
  });
  test("unset fields are zero (the server's defaults equal FunctionLimits)", () => {
    const r = registerRequest(fn({ handler: undefined }), 1);
    expect(r.handler).toBe("handler");
    expect(r.concurrency).toBe(1);
    expect(r.idleTimeoutMs).toBe(0);
    expect(r.invocationTimeoutMs).toBe(0);
  });
});

describe("podFacts", () => {
  const pod = { name: "p", namespace: "ns", uid: "pu", ip: "10.0.0.1", node: "n" };
  test("the dataplane address when the dataplane is on; IPv6 hosts bracketed", () => {
    expect(podFacts({ pod, dataplane: { port: 8444 } } as never, 2)).toEqual({
      pod: "p",
      podUID: "pu",
      attempt: 2,
      address: "10.0.0.1:8444",
    });
    expect(podFacts({ pod: { ...pod, ip: "fd00::1" }, dataplane: { port: 8444 } } as never, 2).address).toBe(
      "[fd00::1]:8444",
    );
  });
  test("no address when the dataplane is off", () => {
    expect(podFacts({ pod, dataplane: { port: 0 } } as never, 1)).toEqual({
      pod: "p",
      podUID: "pu",
      attempt: 1,
    });
  });
});

describe("readyStatus", () => {
  test("one write: phase Ready, endpoint, Registered and Ready True, timing kept", () => {
    const s = readyStatus(
      fn(),
      { pod: "p", podUID: "pu", attempt: 2, address: "10.0.0.7:8444", startedMicros: 10, readyMicros: 20 },
      Date.parse("2026-12-03T10:00:00Z"),
    );
    expect(s).toMatchObject({
      phase: "Ready",
      reason: "Serving",
      attempt: 2,
      assignment: { pod: "p", podUID: "pu", attempt: 2 },
      endpoint: { pod: "p", podUID: "pu", attempt: 2, address: "10.0.0.7:8444", readyMicros: 20 },
      timing: { createdMicros: 1, scheduledMicros: 2, startedMicros: 10 },
    });
    expect(s.conditions?.map((c) => [c.type, c.status])).toEqual([
      ["Scheduled", "True"],
      ["Registered", "True"],
      ["Ready", "True"],
    ]);
  });
  test("a terminal status takes the Run out of service", () => {
    const ready = fn();
    ready.status = readyStatus(
      ready,
      { pod: "p", podUID: "pu", attempt: 2, startedMicros: 10, readyMicros: 20 },
      0,
    );
    const s = functionTerminalStatus(
      ready,
      { phase: RunPhase.Succeeded, reason: "IdleTimeout", message: "idle" },
      10,
      30,
      40,
      0,
    );
    expect(s.phase).toBe("Succeeded");
    expect(s.endpoint).toBeUndefined();
    expect(s.timing).toMatchObject({ startedMicros: 10, finishedMicros: 30, reportedMicros: 40 });
    const c = Object.fromEntries((s.conditions ?? []).map((x) => [x.type, [x.status, x.reason]]));
    expect(c).toMatchObject({
      Ready: ["False", "IdleTimeout"],
      Registered: ["False", "IdleTimeout"],
      Finished: ["True", "IdleTimeout"],
    });
  });
});

describe("endVerdict", () => {
  const reg = (endReason: FunctionEndReason, error = "") => ({
    endReason,
    error,
    invocations: 7,
    limits: {
      idleTimeoutMs: 30_000,
      queueLimit: 0,
      maxRequestBytes: 0,
      maxResponseBytes: 0,
      invocationTimeoutMs: 0,
    },
  });
  test("idle timeout → Succeeded/IdleTimeout; load failure → Failed/RegistrationFailed", () => {
    const idle = endVerdict(reg(FunctionEndReason.IDLE_TIMEOUT) as never, undefined, 0);
    expect(idle).toMatchObject({ kind: "terminal", outcome: { phase: "Succeeded", reason: "IdleTimeout" } });
    if (idle.kind === "terminal") expect(idle.outcome.message).toContain("30s");
    const failed = endVerdict(
      reg(FunctionEndReason.REGISTRATION_FAILED, "SyntaxError: x") as never,
      undefined,
      0,
    );
    expect(failed).toMatchObject({
      kind: "terminal",
      outcome: { phase: "Failed", reason: "RegistrationFailed" },
    });
    if (failed.kind === "terminal") expect(failed.outcome.message).toContain("SyntaxError: x");
  });
  test("our own cancel and timeout decide the outcome; ends we did not ask for are losses", () => {
    expect(endVerdict(reg(FunctionEndReason.CANCELLED) as never, "cancel", 0)).toMatchObject({
      outcome: { phase: "Cancelled", reason: "Cancelled" },
    });
    expect(endVerdict(reg(FunctionEndReason.CANCELLED) as never, "timeout", 60_000)).toMatchObject({
      outcome: { phase: "Timeout", reason: "Timeout" },
    });
    expect(endVerdict(reg(FunctionEndReason.DRAINED) as never, undefined, 0).kind).toBe("lost");
    expect(endVerdict(reg(FunctionEndReason.CANCELLED) as never, undefined, 0).kind).toBe("lost");
  });
});

describe("finalizer patches", () => {
  test("add: tests the UID, creates the list or appends", () => {
    const r = fn();
    expect(addFinalizerPatch(r)).toEqual([
      { op: "test", path: "/metadata/uid", value: "u1" },
      { op: "add", path: "/metadata/finalizers", value: [FUNCTION_FINALIZER] },
    ]);
    r.metadata.finalizers = ["x"];
    expect(addFinalizerPatch(r)?.[1]).toEqual({
      op: "add",
      path: "/metadata/finalizers/-",
      value: FUNCTION_FINALIZER,
    });
    r.metadata.finalizers = ["x", FUNCTION_FINALIZER];
    expect(addFinalizerPatch(r)).toBeUndefined();
  });
  test("remove: tests the entry at the index it removes", () => {
    const r = fn();
    expect(removeFinalizerPatch(r)).toBeUndefined();
    r.metadata.finalizers = ["x", FUNCTION_FINALIZER];
    expect(removeFinalizerPatch(r)).toEqual([
      { op: "test", path: "/metadata/uid", value: "u1" },
      { op: "test", path: "/metadata/finalizers/1", value: FUNCTION_FINALIZER },
      { op: "remove", path: "/metadata/finalizers/1" },
    ]);
  });
});

describe("FunctionTable", () => {
  test("withdraw removes only the named attempt", () => {
    const t = new FunctionTable();
    t.serve("u", { namespace: "ns", name: "f", attempt: 2 });
    t.withdraw("u", 1);
    expect(t.get("u")?.attempt).toBe(2);
    t.withdraw("u", 2);
    expect(t.get("u")).toBeUndefined();
  });
});
