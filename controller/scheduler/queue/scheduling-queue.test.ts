import { describe, expect, test } from "bun:test";
import { Reason, TopologyKeys } from "@kruntimes/api";
import { ManualClock } from "../../util/clock.ts";
import { ManualTimers } from "../../util/timers.ts";
import { PlacementIndex } from "../cache/placement-index.ts";
import { Code, rejected } from "../framework/status.ts";
import type { QueuedRun } from "./queued-run.ts";
import { PRIORITY_AGING_INTERVAL_MS, SchedulingQueue, type WakeSource } from "./scheduling-queue.ts";

const FULL = rejected("resources-fit", Code.Unschedulable, Reason.InsufficientCapacity, "insufficient runs");

function setup() {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const woke: [WakeSource, number][] = [];
  const q = new SchedulingQueue(clock, timers, { woke: (s, n) => woke.push([s, n]) });
  let seq = 0;
  const qr = (
    name: string,
    runs = 1,
    runtime = "ns/rt",
    notBeforeMs = 0,
    o: Partial<QueuedRun> = {},
  ): QueuedRun => ({
    key: `ns/${name}`,
    runtimeKey: runtime,
    namespace: "ns",
    labels: {},
    priority: 0,
    names: ["runs"],
    amounts: [runs],
    shape: `runs=${runs}`,
    seq: seq++,
    sinceMs: Number.NaN,
    rank: 0,
    attempt: 0,
    notBeforeMs,
    errors: 0,
    state: "out",
    ...o,
  });
  return { clock, timers, woke, q, qr };
}

function popAll(q: SchedulingQueue): string[] {
  const out: string[] = [];
  for (let r = q.pop(); r; r = q.pop()) out.push(r.key);
  return out;
}

describe("SchedulingQueue", () => {
  test("queuedOf counts each Runtime's queued Runs through add, park, backoff, pop and remove", () => {
    const { q, qr, clock } = setup();
    q.add(qr("a"));
    q.add(qr("b"));
    q.add(qr("b"));
    q.add(qr("c", 1, "ns/other", clock.now() + 1000));
    expect([q.queuedOf("ns/rt"), q.queuedOf("ns/other"), q.queuedOf("ns/none")]).toEqual([2, 1, 0]);
    const a = q.pop() as QueuedRun;
    expect(q.queuedOf("ns/rt")).toBe(1); // being bound: not queued
    q.park(a, FULL);
    expect(q.queuedOf("ns/rt")).toBe(2);
    const b = q.pop() as QueuedRun;
    q.retryAt(b, clock.now() + 500);
    expect(q.queuedOf("ns/rt")).toBe(2);
    q.remove("ns/a");
    q.remove("ns/a");
    q.remove("ns/c");
    expect([q.queuedOf("ns/rt"), q.queuedOf("ns/other")]).toEqual([1, 0]);
    expect(q.queuedOf("ns/rt")).toBe([...q.queued()].filter((r) => r.runtimeKey === "ns/rt").length);
  });

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

describe("SchedulingQueue priority", () => {
  const at = (priority: number, sinceMs: number) => ({ priority, sinceMs });

  test("higher priority pops first; FIFO within a priority", () => {
    const { q, qr, clock } = setup();
    const t = clock.now();
    q.add(qr("low", 1, "ns/rt", 0, at(-5, t)));
    q.add(qr("d1", 1, "ns/rt", 0, at(0, t)));
    q.add(qr("high", 1, "ns/rt", 0, at(10, t)));
    q.add(qr("d2", 1, "ns/rt", 0, at(0, t)));
    expect(popAll(q)).toEqual(["ns/high", "ns/d1", "ns/d2", "ns/low"]);
  });

  test("FIFO by when a Run began waiting, then by arrival", () => {
    const { q, qr, clock } = setup();
    const t = clock.now();
    q.add(qr("late", 1, "ns/rt", 0, at(0, t - 100)));
    q.add(qr("early", 1, "ns/rt", 0, at(0, t - 200)));
    q.add(qr("same", 1, "ns/rt", 0, at(0, t - 100)));
    expect(popAll(q)).toEqual(["ns/early", "ns/late", "ns/same"]);
  });

  test("aging: +1 per interval waited, so a long-waiting low priority is not starved", () => {
    const { q, qr, clock } = setup();
    const t = clock.now();
    // waited 5 intervals at priority 0: effective 5
    q.add(qr("old", 1, "ns/rt", 0, at(0, t - 5 * PRIORITY_AGING_INTERVAL_MS)));
    q.add(qr("p4", 1, "ns/rt", 0, at(4, t))); // effective 4
    q.add(qr("p6", 1, "ns/rt", 0, at(6, t))); // effective 6
    expect(popAll(q)).toEqual(["ns/p6", "ns/old", "ns/p4"]);
  });

  test("a creation time ahead of the queue's clock counts as now; unknown counts as now", () => {
    const { q, qr, clock } = setup();
    const t = clock.now();
    q.add(qr("future", 1, "ns/rt", 0, at(0, t + 60_000)));
    q.add(qr("unknown", 1, "ns/rt", 0, at(0, Number.NaN)));
    q.add(qr("past", 1, "ns/rt", 0, at(0, t - 1)));
    expect(popAll(q)).toEqual(["ns/past", "ns/future", "ns/unknown"]);
  });

  test("a freed slot goes to the parked Run of highest effective priority, across shapes", () => {
    const { q, qr, clock } = setup();
    const t = clock.now();
    for (const r of [
      qr("small-low", 1, "ns/rt", 0, at(0, t)),
      qr("big-high", 2, "ns/rt", 0, at(50, t)),
      qr("small-high", 1, "ns/rt", 0, at(20, t)),
    ]) {
      q.add(r);
      q.park(q.pop() as QueuedRun, FULL);
    }
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 1 }, "capacity_released")).toBe(1);
    expect(popAll(q)).toEqual(["ns/small-high"]);
    expect(q.wakeFitting("ns/rt", "ns/p2", { runs: 2 }, "capacity_released")).toBe(1);
    expect(popAll(q)).toEqual(["ns/big-high"]);
  });
});

describe("SchedulingQueue affinity waiters", () => {
  const TOPOLOGY = TopologyKeys.runtimePod;
  const requireJob = (job: string) => ({
    runAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: { job } }, topologyKey: TOPOLOGY },
      ],
    },
  });
  const WAITING = rejected(
    "run-affinity",
    Code.Unschedulable,
    Reason.Unschedulable,
    "without a Run matching job=a",
  );
  const yes = { accept: () => true, perRun: false };

  function withPlacements() {
    const s = setup();
    const ix = new PlacementIndex();
    s.q.usePlacements(ix);
    const placeOn = (key: string, pod: string, labels: Record<string, string>) =>
      ix.add({ key, namespace: "ns", podKey: `ns/${pod}`, domain: `ns/${pod}@u`, labels });
    return { ...s, ix, placeOn };
  }

  test("a Run waiting for job=a is woken by a job=a placement, not by other releases", () => {
    const { q, qr, placeOn } = withPlacements();
    placeOn("ns/x", "p1", { job: "a" }); // a job=a Run exists (on a full pod), so no seeding
    q.add(qr("w", 1, "ns/rt", 0, { affinity: requireJob("a"), labels: {} }));
    q.park(q.pop() as QueuedRun, WAITING);
    expect(q.waitsForPlacements("ns")).toBe(true);
    // A release on a pod without job=a Runs does not wake it.
    expect(q.wakeFitting("ns/rt", "ns/p2", { runs: 1 }, "capacity_released", { ...yes, labels: [{}] })).toBe(
      0,
    );
    // Nor does a placement of an unrelated Run.
    expect(q.wakeForPlacement("ns/rt", "ns/p2", { job: "b" }, { runs: 1 }, yes)).toBe(0);
    // A job=a Run placed on a pod with room does.
    expect(q.wakeForPlacement("ns/rt", "ns/p2", { job: "a" }, { runs: 1 }, yes)).toBe(1);
    expect(popAll(q)).toEqual(["ns/w"]);
  });

  test("a release on a pod holding a job=a Run wakes it (found through the pod's labels)", () => {
    const { q, qr, placeOn, woke } = withPlacements();
    placeOn("ns/x", "p1", { job: "a" });
    q.add(qr("w", 1, "ns/rt", 0, { affinity: requireJob("a"), labels: {} }));
    q.park(q.pop() as QueuedRun, WAITING);
    expect(
      q.wakeFitting("ns/rt", "ns/p1", { runs: 1 }, "capacity_released", { ...yes, labels: [{ job: "a" }] }),
    ).toBe(1);
    expect(woke).toEqual([["capacity_released", 1]]);
  });

  test("placement wakes only what the pod has room for, and only Runs the pod accepts", () => {
    const { q, qr, placeOn } = withPlacements();
    placeOn("ns/x", "p1", { job: "a" });
    for (const n of ["w1", "w2", "w3"]) {
      q.add(qr(n, 1, "ns/rt", 0, { affinity: requireJob("a"), labels: {} }));
      q.park(q.pop() as QueuedRun, WAITING);
    }
    expect(q.wakeForPlacement("ns/rt", "ns/p2", { job: "a" }, { runs: 2 }, yes)).toBe(2);
    expect(
      q.wakeForPlacement("ns/rt", "ns/p3", { job: "a" }, { runs: 5 }, { accept: () => false, perRun: false }),
    ).toBe(0);
    expect(q.sizes.parked).toBe(1);
  });

  test("a self-matching cohort with no Run placed yet may seed anywhere: any release wakes it", () => {
    const { q, qr } = withPlacements();
    q.add(qr("seed", 1, "ns/rt", 0, { affinity: requireJob("a"), labels: { job: "a" } }));
    q.park(q.pop() as QueuedRun, FULL);
    expect(q.waitsForPlacements("ns")).toBe(false);
    expect(q.wakeFitting("ns/rt", "ns/p9", { runs: 1 }, "capacity_released", { ...yes, labels: [] })).toBe(1);
  });

  test("once its cohort is placed the group waits for it; when the cohort is gone it may seed again", () => {
    const { q, qr, placeOn, ix } = withPlacements();
    q.add(qr("m", 1, "ns/rt", 0, { affinity: requireJob("a"), labels: { job: "a" } }));
    q.park(q.pop() as QueuedRun, FULL);
    placeOn("ns/x", "p1", { job: "a" });
    // A release elsewhere finds it open, sees the cohort placed, and from then on it is bound.
    expect(
      q.wakeFitting("ns/rt", "ns/p2", { runs: 1 }, "capacity_released", {
        accept: () => false,
        perRun: false,
        labels: [],
      }),
    ).toBe(0);
    expect(q.waitsForPlacements("ns")).toBe(true);
    ix.remove("ns/x", "ns");
    q.placementRemoved("ns", { job: "a" });
    expect(q.waitsForPlacements("ns")).toBe(false);
    expect(q.wakeFitting("ns/rt", "ns/p2", { runs: 1 }, "capacity_released", { ...yes, labels: [] })).toBe(1);
  });

  test("perRun: a pod whose Runs refuse some labels is asked per Run", () => {
    const { q, qr } = setup();
    for (const [n, tier] of [
      ["db", "db"],
      ["web", "web"],
    ] as const) {
      q.add(qr(n, 1, "ns/rt", 0, { labels: { tier } }));
      q.park(q.pop() as QueuedRun, FULL);
    }
    const wake = { accept: (r: QueuedRun) => r.labels.tier !== "db", perRun: true, labels: [] };
    expect(q.wakeFitting("ns/rt", "ns/p", { runs: 1 }, "capacity_released", wake)).toBe(1);
    expect(popAll(q)).toEqual(["ns/web"]);
    expect(q.sizes.parked).toBe(1);
  });
});
