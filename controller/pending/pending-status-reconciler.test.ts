import { describe, expect, test } from "bun:test";
import { Reason, type Run, RunPhase } from "@kruntimes/api";
import { aRun } from "../testing/fixtures.ts";
import { RecordingWriter } from "../testing/recording-writer.ts";
import { ManualClock } from "../util/clock.ts";
import { PendingStatusReconciler, type Waiting } from "./pending-status-reconciler.ts";

function setup(run: Run, waiting?: Waiting, capacityDelayMs?: number) {
  const clock = new ManualClock();
  const writer = new RecordingWriter();
  const r = new PendingStatusReconciler({
    runs: new Map([[`ns/${run.metadata.name}`, run]]),
    waitingOf: () => waiting,
    writer,
    clock,
    delayMs: 1000,
    ...(capacityDelayMs !== undefined ? { capacityDelayMs } : {}),
  });
  return { r, writer, clock };
}

describe("PendingStatusReconciler", () => {
  test("a session Run is admitted (scheduled like the other modes), not ended", async () => {
    const { r, writer } = setup(aRun({ name: "f", mode: "session" }));
    await r.reconcile("ns/f");
    expect(writer.patches).toEqual([]);
  });

  test("a cancelled Pending Run ends Cancelled", async () => {
    const { r, writer } = setup(aRun({ name: "c", termination: "Immediate" }));
    await r.reconcile("ns/c");
    expect(writer.lastStatus()?.phase).toBe(RunPhase.Cancelled);
  });

  test("the waiting reason is written after the delay, once", async () => {
    const now = new ManualClock().now();
    const waiting = { reason: Reason.InsufficientCapacity, message: "0/3 pods…", sinceMs: now };
    const { r, writer, clock } = setup(aRun({ name: "w" }), waiting);
    expect(await r.reconcile("ns/w")).toEqual({ kind: "requeueAfter", ms: 1000 });
    clock.advance(1000);
    await r.reconcile("ns/w");
    expect(writer.lastStatus()?.waitingReason).toBe(Reason.InsufficientCapacity);
    expect(writer.lastStatus()?.phase).toBe(RunPhase.Pending);
  });

  test("InsufficientCapacity waits its own, longer delay; the other reasons do not", async () => {
    const now = new ManualClock().now();
    const busy = { reason: Reason.InsufficientCapacity, message: "0/3 pods…", sinceMs: now };
    const c = setup(aRun({ name: "w" }), busy, 10_000);
    expect(await c.r.reconcile("ns/w")).toEqual({ kind: "requeueAfter", ms: 10_000 });
    c.clock.advance(9_999);
    expect(await c.r.reconcile("ns/w")).toEqual({ kind: "requeueAfter", ms: 1 });
    expect(c.writer.patches).toEqual([]);
    c.clock.advance(1);
    await c.r.reconcile("ns/w");
    expect(c.writer.lastStatus()?.waitingReason).toBe(Reason.InsufficientCapacity);

    const none = { reason: Reason.NoReadyPods, message: "0/0 pods", sinceMs: now };
    const n = setup(aRun({ name: "w" }), none, 10_000);
    expect(await n.r.reconcile("ns/w")).toEqual({ kind: "requeueAfter", ms: 1000 });
  });

  test("an unchanged waiting reason is not written again", async () => {
    const run = aRun({ name: "w", status: { phase: "Pending", waitingReason: Reason.NoReadyPods } });
    const { r, writer } = setup(run, { reason: Reason.NoReadyPods, message: "m", sinceMs: 0 });
    await r.reconcile("ns/w");
    expect(writer.patches).toEqual([]);
  });

  test("WorkspaceUnavailable is written again when its message changes (Released → not found)", async () => {
    const status = {
      phase: "Pending" as const,
      waitingReason: Reason.WorkspaceUnavailable,
      message: 'PersistentWorkspace "d" is Released: it takes no new Runs (spec.released)',
    };
    const same = setup(aRun({ name: "w", status }), {
      reason: Reason.WorkspaceUnavailable,
      message: status.message,
      sinceMs: 0,
    });
    await same.r.reconcile("ns/w");
    expect(same.writer.patches).toEqual([]);
    const moved = setup(aRun({ name: "w", status }), {
      reason: Reason.WorkspaceUnavailable,
      message: 'PersistentWorkspace "d" not found',
      sinceMs: 0,
    });
    await moved.r.reconcile("ns/w");
    expect(moved.writer.lastStatus()?.message).toBe('PersistentWorkspace "d" not found');
  });

  test("Runs that are not parked, or not Pending, are left alone", async () => {
    const { r, writer } = setup(aRun({ name: "x" }));
    await r.reconcile("ns/x");
    const bound = setup(aRun({ name: "y", status: { phase: "Running" } }), {
      reason: Reason.NoReadyPods,
      message: "m",
      sinceMs: 0,
    });
    await bound.r.reconcile("ns/y");
    expect([...writer.patches, ...bound.writer.patches]).toEqual([]);
  });
});
