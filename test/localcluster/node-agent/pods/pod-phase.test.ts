import { describe, expect, test } from "bun:test";
import type { ContainerStatus, PodPhase, PodSpec } from "../api/types.ts";
import { podConditions } from "./pod-conditions.ts";
import { podPhase } from "./pod-phase.ts";

// Fixture builders: container statuses in the states kubelet distinguishes.
const base = { image: "i", imageID: "", restartCount: 0, lastState: {} };
const running = (name: string, ready = true, started = true): ContainerStatus => ({
  ...base,
  name,
  ready,
  started,
  state: { running: { startedAt: "t" } },
});
const exited = (name: string, exitCode: number): ContainerStatus => ({
  ...base,
  name,
  ready: false,
  state: { terminated: { exitCode } },
});
const waiting = (name: string): ContainerStatus => ({
  ...base,
  name,
  ready: false,
  state: { waiting: { reason: "ContainerCreating" } },
});
const backoff = (name: string, exitCode: number): ContainerStatus => ({
  ...base,
  name,
  ready: false,
  state: { waiting: { reason: "CrashLoopBackOff" } },
  lastState: { terminated: { exitCode } },
});

const spec = (restartPolicy: PodSpec["restartPolicy"], init: PodSpec["initContainers"] = []): PodSpec => ({
  restartPolicy,
  initContainers: init,
  containers: [{ name: "a" }, { name: "b" }],
});
const sidecar = { name: "s", restartPolicy: "Always" as const };

describe("pod phase (kubelet's getPhase)", () => {
  const cases: [string, PodSpec, ContainerStatus[], ContainerStatus[], boolean, PodPhase][] = [
    ["nothing started yet", spec("Always"), [], [waiting("a"), waiting("b")], false, "Pending"],
    ["one running, one waiting", spec("Always"), [], [running("a"), waiting("b")], false, "Pending"],
    ["all running", spec("Always"), [], [running("a"), running("b")], false, "Running"],
    [
      "Always: exited ones are restarting",
      spec("Always"),
      [],
      [exited("a", 0), backoff("b", 1)],
      false,
      "Running",
    ],
    ["OnFailure: all succeeded", spec("OnFailure"), [], [exited("a", 0), exited("b", 0)], false, "Succeeded"],
    [
      "OnFailure: a failure restarts",
      spec("OnFailure"),
      [],
      [exited("a", 0), backoff("b", 1)],
      false,
      "Running",
    ],
    ["Never: one failed", spec("Never"), [], [exited("a", 0), exited("b", 2)], false, "Failed"],
    [
      "deleted (terminal): killed containers fail the pod",
      spec("Always"),
      [],
      [exited("a", 0), exited("b", 143)],
      true,
      "Failed",
    ],
    [
      "deleted (terminal): clean exits succeed",
      spec("Always"),
      [],
      [exited("a", 0), exited("b", 0)],
      true,
      "Succeeded",
    ],
    [
      "init running",
      spec("Always", [{ name: "i" }]),
      [running("i")],
      [waiting("a"), waiting("b")],
      false,
      "Pending",
    ],
    [
      "init failed, Never",
      spec("Never", [{ name: "i" }]),
      [exited("i", 1)],
      [waiting("a"), waiting("b")],
      false,
      "Failed",
    ],
    [
      "init failed, restarting",
      spec("Always", [{ name: "i" }]),
      [backoff("i", 1)],
      [waiting("a"), waiting("b")],
      false,
      "Pending",
    ],
    [
      "sidecar not started yet",
      spec("Always", [sidecar]),
      [running("s", false, false)],
      [waiting("a"), waiting("b")],
      false,
      "Pending",
    ],
    [
      "sidecar running with apps",
      spec("Never", [sidecar]),
      [running("s")],
      [running("a"), running("b")],
      false,
      "Running",
    ],
    [
      "sidecar stopped after apps succeeded",
      spec("Never", [sidecar]),
      [exited("s", 143)],
      [exited("a", 0), exited("b", 0)],
      false,
      "Succeeded",
    ],
  ];
  test.each(cases)("%s", (_name, s, init, app, terminal, want) => {
    expect(podPhase(s, init, app, terminal)).toBe(want);
  });
});

describe("pod conditions", () => {
  const now = "2026-01-01T00:00:10Z";
  const before = "2026-01-01T00:00:00Z";
  test("kubelet's reasons and messages; others' conditions kept; transition times kept while unchanged", () => {
    const conds = podConditions(
      {
        spec: { ...spec("Always", [{ name: "i" }]), readinessGates: [{ conditionType: "example.com/gate" }] },
        phase: "Running",
        sandboxReady: true,
        init: [exited("i", 0)],
        app: [running("a"), running("b", false)],
        existing: [
          { type: "PodScheduled", status: "True", lastTransitionTime: before },
          { type: "Initialized", status: "True", lastTransitionTime: before },
          { type: "Ready", status: "True", lastTransitionTime: before },
        ],
      },
      now,
    );
    const by = Object.fromEntries(conds.map((c) => [c.type, c]));
    expect(by.PodScheduled?.lastTransitionTime).toBe(before);
    expect(by.Initialized).toMatchObject({ status: "True", lastTransitionTime: before });
    expect(by.ContainersReady).toMatchObject({
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [b]",
    });
    expect(by.Ready).toMatchObject({ status: "False", lastTransitionTime: now });
  });
  test("readiness gates hold Ready back; a completed pod is not ready with PodCompleted", () => {
    const input = {
      spec: { ...spec("Always"), readinessGates: [{ conditionType: "g" }] },
      phase: "Running" as PodPhase,
      sandboxReady: true,
      init: [],
      app: [running("a"), running("b")],
      existing: [],
    };
    const gated = podConditions(input, now).find((c) => c.type === "Ready");
    expect(gated).toMatchObject({ status: "False", reason: "ReadinessGatesNotReady" });
    const open = podConditions({ ...input, existing: [{ type: "g", status: "True" }] }, now).find(
      (c) => c.type === "Ready",
    );
    expect(open?.status).toBe("True");
    const done = podConditions({ ...input, phase: "Succeeded", app: [exited("a", 0), exited("b", 0)] }, now);
    expect(done.find((c) => c.type === "ContainersReady")).toMatchObject({
      status: "False",
      reason: "PodCompleted",
    });
  });
  test("a sidecar that has not started keeps the pod uninitialized", () => {
    const conds = podConditions(
      {
        spec: spec("Always", [sidecar]),
        phase: "Pending",
        sandboxReady: true,
        init: [running("s", false, false)],
        app: [],
        existing: [],
      },
      now,
    );
    expect(conds.find((c) => c.type === "Initialized")).toMatchObject({
      status: "False",
      reason: "ContainersNotInitialized",
      message: "containers with incomplete status: [s]",
    });
  });
});
