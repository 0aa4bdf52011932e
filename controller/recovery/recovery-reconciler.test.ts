import { describe, expect, test } from "bun:test";
import { type Run, RunPhase } from "@kruntimes/api";
import pino from "pino";
import { Registry } from "prom-client";
import { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import { aLease, aPod, aRun, boundTo } from "../testing/fixtures.ts";
import { RecordingWriter } from "../testing/recording-writer.ts";
import { ManualClock } from "../util/clock.ts";
import { ManualTimers } from "../util/timers.ts";
import { RecoveryReconciler } from "./recovery-reconciler.ts";

function setup(run: Run, podAlive = true) {
  const clock = new ManualClock();
  const noop = () => {};
  const cache = new SchedulerCache(
    { podFreed: noop, runtimePodsChanged: noop, podTrouble: noop, runtimeChanged: noop },
    clock,
    new ManualTimers(clock),
    { staleAfterMs: 15_000, assumeTtlMs: 30_000 },
  );
  if (podAlive) {
    cache.upsertPod(aPod({ name: "p1" }));
    cache.upsertLease(aLease("p1", "uid-p1", clock.now()));
  }
  const writer = new RecordingWriter();
  const runs = new Map([[`ns/${run.metadata.name}`, run]]);
  const r = new RecoveryReconciler({
    runs,
    cache,
    writer,
    clock,
    log: pino({ level: "silent" }),
    registry: new Registry(),
    options: { staleAfterMs: 15_000, startTimeoutMs: 30_000 },
  });
  return { r, writer, clock };
}

describe("RecoveryReconciler", () => {
  test("a session whose pod is gone ends Failed even with retries left (never re-placed)", async () => {
    const run = aRun({
      name: "s",
      mode: "session",
      retry: { maxAttempts: 3 },
      status: boundTo("p1", 1, "Ready"),
    });
    const { r, writer } = setup(run, false);
    await r.reconcile("ns/s");
    const s = writer.lastStatus();
    expect(s?.phase).toBe(RunPhase.Failed);
    expect(s?.reason).toBe("PodGone");
    expect(s?.attempt).toBe(1);
    expect(s?.endpoint).toBeUndefined();
    expect(s?.message).toContain("never re-placed");
  });

  test("a healthy assignment is left alone", async () => {
    const { r, writer } = setup(aRun({ name: "a", status: boundTo("p1", 1, "Running") }));
    expect((await r.reconcile("ns/a")).kind).toBe("done");
    expect(writer.patches).toEqual([]);
  });

  test("pod gone + retries left: back to Pending with attempt+1, fenced on phase, attempt and pod UID", async () => {
    const run = aRun({ name: "a", retry: { maxAttempts: 2 }, status: boundTo("p1", 1, "Running") });
    const { r, writer } = setup(run, false);
    await r.reconcile("ns/a");
    expect(writer.patches[0]?.ops.slice(0, 3)).toEqual([
      { op: "test", path: "/status/phase", value: "Running" },
      { op: "test", path: "/status/attempt", value: 1 },
      { op: "test", path: "/status/assignment/podUID", value: "uid-p1" },
    ]);
    const s = writer.lastStatus();
    expect(s?.phase).toBe(RunPhase.Pending);
    expect(s?.attempt).toBe(2);
    expect(s?.assignment).toBeUndefined();
    expect(s?.reason).toBe("PodGone");
  });

  test("a Ready function Run on a lost pod is re-placed like a Running task: attempt+1, no endpoint", async () => {
    const ready = {
      ...boundTo("p1", 1, "Ready"),
      endpoint: { pod: "p1", podUID: "uid-p1", attempt: 1, readyMicros: 5 },
      conditions: [
        { type: "Ready", status: "True", reason: "Serving", message: "", lastTransitionTime: "t" },
      ],
    } as Run["status"];
    const run = aRun({ name: "f", mode: "function", retry: { maxAttempts: 3 }, status: ready });
    const { r, writer } = setup(run, false);
    await r.reconcile("ns/f");
    const s = writer.lastStatus();
    expect(writer.patches[0]?.ops[0]).toEqual({ op: "test", path: "/status/phase", value: "Ready" });
    expect(s).toMatchObject({ phase: RunPhase.Pending, attempt: 2, reason: "PodGone" });
    expect(s?.endpoint).toBeUndefined();
    expect(s?.assignment).toBeUndefined();
  });

  test("a Ready function Run that cannot be re-placed fails without an endpoint, Ready False", async () => {
    const ready = {
      ...boundTo("p1", 1, "Ready"),
      endpoint: { pod: "p1", podUID: "uid-p1", attempt: 1 },
      conditions: [
        { type: "Ready", status: "True", reason: "Serving", message: "", lastTransitionTime: "t" },
      ],
    } as Run["status"];
    const { r, writer } = setup(aRun({ name: "f", mode: "function", status: ready }), false);
    await r.reconcile("ns/f");
    const s = writer.lastStatus();
    expect(s?.phase).toBe(RunPhase.Failed);
    expect(s?.endpoint).toBeUndefined();
    const conditions = (s?.conditions ?? []) as { type: string }[];
    expect(conditions.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "PodGone" });
  });

  test("pod gone and no retry policy: Failed PodGone, assignment kept", async () => {
    const { r, writer } = setup(aRun({ name: "a", status: boundTo("p1", 1, "Scheduled") }), false);
    await r.reconcile("ns/a");
    const s = writer.lastStatus();
    expect(s?.phase).toBe(RunPhase.Failed);
    expect(s?.reason).toBe("PodGone");
    expect(s?.assignment).toMatchObject({ pod: "p1" });
  });

  test("a Run being cancelled ends Cancelled when its pod is lost", async () => {
    const run = aRun({ name: "a", termination: "Immediate", status: boundTo("p1", 1, "Running") });
    const { r, writer } = setup(run, false);
    await r.reconcile("ns/a");
    expect(writer.lastStatus()?.phase).toBe(RunPhase.Cancelled);
  });

  test("a fenced write (state moved on) is done, not retried", async () => {
    const { r, writer } = setup(aRun({ name: "a", status: boundTo("p1", 1, "Running") }), false);
    writer.failWith = 422;
    expect((await r.reconcile("ns/a")).kind).toBe("done");
    writer.failWith = 500;
    expect((await r.reconcile("ns/a")).kind).toBe("backoff");
  });

  test("stuck in Scheduled: requeued after the start timeout", async () => {
    const clock = new ManualClock();
    const s = boundTo("p1", 1, "Scheduled");
    s.timing = { scheduledMicros: clock.now() * 1000 };
    const { r, writer, clock: c } = setup(aRun({ name: "a", status: s }));
    expect(await r.reconcile("ns/a")).toEqual({ kind: "requeueAfter", ms: 30_000 });
    c.advance(30_000);
    // The heartbeat is stale too by now (no renewals in this test), which is also PodUnhealthy.
    await r.reconcile("ns/a");
    expect(writer.lastStatus()?.reason).toBe("PodUnhealthy");
  });
});
