import { describe, expect, test } from "bun:test";
import { Reason } from "@kruntimes/api";
import { ManualClock } from "../../util/clock.ts";
import { ManualTimers } from "../../util/timers.ts";
import { Code, rejected } from "../framework/status.ts";
import type { QueuedRun } from "./queued-run.ts";
import { SchedulingQueue, type WakeSource } from "./scheduling-queue.ts";

const FULL = rejected("resources-fit", Code.Unschedulable, Reason.InsufficientCapacity, "insufficient runs");

function setup() {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const woke: [WakeSource, number][] = [];
  const q = new SchedulingQueue(clock, timers, { woke: (s, n) => woke.push([s, n]) });
  let seq = 0;
  const qr = (name: string, runs = 1, runtime = "ns/rt", notBeforeMs = 0): QueuedRun => ({
    key: `ns/${name}`,
    runtimeKey: runtime,
    namespace: "ns",
    labels: {},
    priority: 0,
    names: ["runs"],
    amounts: [runs],
    shape: `runs=${runs}`,
    seq: seq++,
    attempt: 0,
    notBeforeMs,
    errors: 0,
    state: "out",
  });
  return { clock, timers, woke, q, qr };
}

function popAll(q: SchedulingQueue): string[] {
  const out: string[] = [];
  for (let r = q.pop(); r; r = q.pop()) out.push(r.key);
  return out;
}

describe("SchedulingQueue", () => {
  test("active is FIFO by arrival and dedupes", () => {
    const { q, qr } = setup();
    const a = qr("a");
    q.add(a);
    q.add(qr("b"));
    q.add(a);
    expect(popAll(q)).toEqual(["ns/a", "ns/b"]);
  });

  test("a freed pod wakes only as many parked Runs as fit, oldest first", () => {
    const { q, qr, woke } = setup();
    const runs = Array.from({ length: 10 }, (_, i) => qr(`r${i}`));
    for (const r of runs) {
      q.add(r);
      q.park(q.pop() as QueuedRun, FULL);
    }
    expect(q.sizes.parked).toBe(10);
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 2 }, "capacity_released")).toBe(2);
    expect(popAll(q)).toEqual(["ns/r0", "ns/r1"]);
    expect(q.sizes.parked).toBe(8);
    expect(woke).toEqual([["capacity_released", 2]]);
  });

  test("capacity already promised to woken Runs is not promised again", () => {
    const { q, qr } = setup();
    for (let i = 0; i < 5; i++) {
      q.add(qr(`r${i}`));
      q.park(q.pop() as QueuedRun, FULL);
    }
    // Two releases on the same pod before any cycle: free goes 1, then 2.
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 1 }, "capacity_released")).toBe(1);
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 2 }, "capacity_released")).toBe(1);
    expect(popAll(q)).toEqual(["ns/r0", "ns/r1"]);
    // Once cycled, the promise is gone: a third release with 1 free wakes one more.
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 1 }, "capacity_released")).toBe(1);
  });

  test("wakes per shape: a big request does not block small ones", () => {
    const { q, qr } = setup();
    for (const r of [qr("big", 4), qr("s1"), qr("s2")]) {
      q.add(r);
      q.park(q.pop() as QueuedRun, FULL);
    }
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 3 }, "capacity_released")).toBe(2);
    expect(popAll(q).sort()).toEqual(["ns/s1", "ns/s2"]);
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 4 }, "capacity_released")).toBe(1);
  });

  test("other Runtimes' parked Runs are not woken", () => {
    const { q, qr } = setup();
    q.add(qr("x", 1, "ns/other"));
    q.park(q.pop() as QueuedRun, FULL);
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 100 }, "capacity_released")).toBe(0);
    expect(q.wakeRuntime("ns/other", "runtime_changed")).toBe(1);
    expect(popAll(q)).toEqual(["ns/x"]);
  });

  test("backoff Runs become active when their time comes, not before", () => {
    const { q, qr, clock, timers, woke } = setup();
    q.add(qr("later", 1, "ns/rt", clock.now() + 5000));
    q.add(qr("now"));
    expect(popAll(q)).toEqual(["ns/now"]);
    timers.advance(4999);
    expect(q.pop()).toBeUndefined();
    timers.advance(1);
    expect(popAll(q)).toEqual(["ns/later"]);
    expect(woke).toEqual([["backoff_done", 1]]);
  });

  test("remove takes a Run out of whichever sub-queue holds it", () => {
    const { q, qr, clock } = setup();
    q.add(qr("a"));
    q.add(qr("b", 1, "ns/rt", clock.now() + 1000));
    q.add(qr("c"));
    q.park(q.pop() as QueuedRun, FULL);
    for (const k of ["ns/a", "ns/b", "ns/c"]) q.remove(k);
    expect(q.sizes).toEqual({ active: 0, backoff: 0, parked: 0 });
  });

  test("the safety flush re-activates only long-parked Runs", () => {
    const { q, qr, clock } = setup();
    q.add(qr("old"));
    q.park(q.pop() as QueuedRun, FULL);
    clock.advance(60_000);
    q.add(qr("new"));
    q.park(q.pop() as QueuedRun, FULL);
    expect(q.flushParkedBefore(clock.now() - 30_000)).toBe(1);
    expect(popAll(q)).toEqual(["ns/old"]);
  });

  test("waitForActive resolves on the next add", async () => {
    const { q, qr } = setup();
    const p = q.waitForActive();
    q.add(qr("a"));
    await p;
    expect(q.sizes.active).toBe(1);
  });
});
