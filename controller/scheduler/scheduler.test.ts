import { describe, expect, test } from "bun:test";
import { Reason, type Run } from "@kruntimes/api";
import { aLease, aPod, aRun, aRuntime, boundTo } from "../testing/fixtures.ts";
import { type Harness, schedulerHarness } from "../testing/scheduler-harness.ts";
import { ManualClock } from "../util/clock.ts";
import { ManualTimers } from "../util/timers.ts";

function setup(o: { pods?: number; capacity?: number; confirm?: boolean } = {}) {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const h = schedulerHarness({ clock, timers, confirmBinds: o.confirm });
  const capacity = o.capacity ?? 4;
  h.scheduler.cache.upsertRuntime(aRuntime("rt", { runs: capacity }));
  for (let i = 0; i < (o.pods ?? 3); i++) {
    h.scheduler.cache.upsertPod(aPod({ name: `p${i}`, capacity: { runs: capacity } }));
    h.scheduler.cache.upsertLease(aLease(`p${i}`, `uid-p${i}`, clock.now()));
  }
  return { h, clock, timers };
}

/** Requests held per pod by non-terminal assigned Runs in the store (the apiserver's truth). */
function perPod(h: Harness): Map<string, number> {
  const out = new Map<string, number>();
  for (const run of h.binder.stored.values()) {
    const a = run.status?.assignment;
    if (!a || !["Scheduled", "Running"].includes(run.status?.phase ?? "")) continue;
    out.set(a.pod, (out.get(a.pod) ?? 0) + (run.spec.resources?.requests?.runs ?? 1));
  }
  return out;
}

function finish(h: Harness, key: string): void {
  const run = h.binder.stored.get(key) as Run;
  h.upsert({ ...run, status: { ...run.status, phase: "Succeeded" } });
}

const flush = () => new Promise((r) => setImmediate(r));

/** Waits (up to 30 s, polling) for what a real-time delay in the scheduler leads to. */
async function settled(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out after 30000ms");
    await Bun.sleep(10);
  }
}

describe("Scheduler", () => {
  test("a burst never exceeds any pod's capacity, and releases wake exactly what fits", async () => {
    const { h } = setup({ pods: 3, capacity: 4 });
    for (let i = 0; i < 50; i++) h.upsert(aRun({ name: `r${i}`, requests: { runs: 1 + (i % 2) } }));
    h.drain();
    await flush();
    const bound = new Set(h.binder.bound.map((b) => b.run));
    expect(bound.size).toBe(h.binder.bound.length);
    for (const used of perPod(h).values()) expect(used).toBeLessThanOrEqual(4);
    let rounds = 0;
    while (bound.size < 50 && rounds++ < 200) {
      const running = [...h.binder.stored.values()].filter((r) => r.status?.phase === "Scheduled");
      finish(h, `ns/${(running[0] as Run).metadata.name}`);
      h.drain();
      await flush();
      for (const b of h.binder.bound) bound.add(b.run);
      for (const used of perPod(h).values()) expect(used).toBeLessThanOrEqual(4);
    }
    expect(bound.size).toBe(50);
    expect(h.binder.bound.length).toBe(50);
    expect(h.wakeups.get("capacity_released") ?? 0).toBeLessThan(100);
  });

  test("spreads Runs over pods (least loaded, deterministic ties)", async () => {
    const { h } = setup({ pods: 3, capacity: 4 });
    for (let i = 0; i < 6; i++) h.upsert(aRun({ name: `r${i}` }));
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.pod)).toEqual(["p0", "p1", "p2", "p0", "p1", "p2"]);
  });

  test("a full Runtime parks Runs with InsufficientCapacity; one release wakes one Run", async () => {
    const { h } = setup({ pods: 1, capacity: 1 });
    for (const n of ["a", "b", "c"]) h.upsert(aRun({ name: n }));
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual(["ns/a"]);
    expect(h.scheduler.queue.get("ns/b")?.waiting?.reason).toBe(Reason.InsufficientCapacity);
    expect(h.parked).toEqual(["ns/b", "ns/c"]);
    finish(h, "ns/a");
    expect(h.scheduler.queue.sizes).toEqual({ active: 1, backoff: 0, parked: 1 });
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual(["ns/a", "ns/b"]);
  });

  test("Runs of a missing Runtime wait with RuntimeNotFound until it and its pods exist", async () => {
    const { h, clock } = setup({ pods: 0 });
    h.upsert(aRun({ name: "a", runtime: "later" }));
    h.drain();
    expect(h.scheduler.queue.get("ns/a")?.waiting?.reason).toBe(Reason.RuntimeNotFound);
    h.scheduler.cache.upsertRuntime(aRuntime("later"));
    h.drain();
    expect(h.scheduler.queue.get("ns/a")?.waiting?.reason).toBe(Reason.NoReadyPods);
    h.scheduler.cache.upsertPod(aPod({ name: "l0", runtime: "later" }));
    h.scheduler.cache.upsertLease(aLease("l0", "uid-l0", clock.now()));
    h.drain();
    await flush();
    expect(h.binder.bound).toEqual([{ run: "ns/a", pod: "l0", attempt: 1 }]);
  });

  test("cancelled Runs are not queued; they go to the ending hook", () => {
    const { h } = setup();
    h.upsert(aRun({ name: "c", termination: "Immediate" }));
    expect(h.drain()).toBe(0);
    expect(h.ending).toEqual(["ns/c"]);
  });

  test("a session lands only on an empty pod and nothing lands beside it", async () => {
    const { h } = setup({ pods: 2, capacity: 4 });
    h.upsert(aRun({ name: "t" }));
    h.drain();
    await flush();
    const taskPod = h.binder.bound[0]?.pod ?? "";
    h.upsert(aRun({ name: "t", status: boundTo(taskPod ?? "", 1, "Running") }));
    h.upsert(aRun({ name: "s", mode: "session" }));
    h.drain();
    await flush();
    const sessionPod = h.binder.bound[1]?.pod;
    expect(h.binder.bound[1]?.run).toBe("ns/s");
    expect(sessionPod).not.toBe(taskPod);
    h.upsert(aRun({ name: "s", mode: "session", status: boundTo(sessionPod ?? "", 1, "Ready") }));
    for (const n of ["a", "b", "c", "d"]) h.upsert(aRun({ name: n }));
    h.drain();
    await flush();
    // The task pod had 3 free slots: three land there, the fourth waits (the session pod is sealed).
    expect(h.binder.bound.slice(2).map((b) => b.pod)).toEqual([taskPod, taskPod, taskPod]);
    expect(h.scheduler.queue.get("ns/d")?.waiting?.reason).toBe(Reason.InsufficientCapacity);
    expect(h.ending).toEqual([]);
  });

  test("function Runs are scheduled like tasks and hold their capacity while Ready", async () => {
    const { h } = setup({ pods: 1 });
    h.upsert(aRun({ name: "f", mode: "function", requests: { runs: 4 } }));
    h.drain();
    await flush();
    expect(h.binder.bound).toEqual([{ run: "ns/f", pod: "p0", attempt: 1 }]);
    expect(h.ending).toEqual([]);
    // Ready (registered, serving) still holds the 4 runs of p0: nothing else fits there.
    h.upsert(aRun({ name: "f", mode: "function", requests: { runs: 4 }, status: boundTo("p0", 1, "Ready") }));
    h.upsert(aRun({ name: "t" }));
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual(["ns/f"]);
    expect(h.scheduler.queue.get("ns/t")?.waiting?.reason).toBe(Reason.InsufficientCapacity);
  });

  test("pods with a stale heartbeat get nothing", async () => {
    const { h, timers, clock } = setup({ pods: 2 });
    timers.advance(9_000);
    h.scheduler.cache.upsertLease(aLease("p1", "uid-p1", clock.now()));
    timers.advance(2_000);
    h.upsert(aRun({ name: "a" }));
    h.upsert(aRun({ name: "b" }));
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.pod)).toEqual(["p1", "p1"]);
  });

  test("a fenced bind releases the capacity and waits for the newer version instead of spinning", async () => {
    const { h } = setup({ pods: 1, capacity: 1 });
    h.binder.failNext = ["fenced"];
    h.upsert(aRun({ name: "a" }));
    h.upsert(aRun({ name: "b" }));
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual([]);
    expect(h.scheduler.cache.pod("ns/p0")?.used).toEqual({ runs: 0 });
    // b was parked while a held the slot; the release woke it and it can now bind.
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual(["ns/b"]);
    expect(h.scheduler.queue.get("ns/a")).toBeUndefined();
    // The newer version of a arrives: it is considered again.
    h.upsert(aRun({ name: "a", rv: "2" }));
    expect(h.scheduler.queue.get("ns/a")?.state).toBe("active");
  });

  test("an ambiguous bind keeps the capacity until a fresh read settles it", async () => {
    const { h } = setup({ pods: 1, capacity: 1, confirm: false });
    h.binder.failNext = ["ambiguous"];
    h.upsert(aRun({ name: "a" }));
    h.upsert(aRun({ name: "b" }));
    h.drain();
    await flush();
    expect(h.scheduler.cache.isAssumed("ns/a")).toBe(true);
    expect(h.scheduler.cache.pod("ns/p0")?.used).toEqual({ runs: 1 });
    expect(h.binder.bound).toEqual([]);
    // The settling read comes after a real 200 ms pause (bind-tracker's first settle delay).
    await settled(() => !h.scheduler.cache.isAssumed("ns/a"));
    // The read shows a still Pending: the write did not land; capacity is released, a retried.
    expect(h.scheduler.cache.isAssumed("ns/a")).toBe(false);
    expect(h.scheduler.queue.get("ns/a")?.state).toBe("active");
  });

  test("a cycle meeting a waiting-reason write in flight waits for it and binds on the written state", async () => {
    const { h } = setup({ pods: 1, capacity: 1 });
    h.upsert(aRun({ name: "a" }));
    h.upsert(aRun({ name: "w" }));
    h.drain();
    await flush();
    expect(h.scheduler.queue.get("ns/w")?.state).toBe("parked");
    // The pending-status writer starts writing w's waiting reason …
    expect(h.scheduler.beginStatusWrite("ns/w")).toBe(true);
    // … while a's completion frees the slot and wakes w.
    finish(h, "ns/a");
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual(["ns/a"]);
    // The write lands (the store has a status now; the informer has not shown it yet).
    const written = aRun({
      name: "w",
      rv: "7",
      status: { phase: "Pending", waitingReason: "InsufficientCapacity" },
    });
    h.binder.put(written);
    h.scheduler.endStatusWrite("ns/w", written);
    h.drain();
    await flush();
    expect(h.binder.bound.map((b) => b.run)).toEqual(["ns/a", "ns/w"]);
  });

  test("no status write while the Run is being bound", () => {
    const { h } = setup({ pods: 1, capacity: 1, confirm: false });
    h.upsert(aRun({ name: "a" }));
    h.drain();
    expect(h.scheduler.beginStatusWrite("ns/a")).toBe(false);
  });

  test("a restarted scheduler rebuilds accounting from Run state and never double-books", async () => {
    const first = setup({ pods: 3, capacity: 4 });
    for (let i = 0; i < 20; i++) first.h.upsert(aRun({ name: `r${i}` }));
    for (let i = 0; i < 7; i++) {
      const qr = first.h.scheduler.queue.pop();
      if (qr) first.h.scheduler.scheduleOne(qr);
    }
    await flush();
    // "Crash": a new scheduler sees only what the store holds.
    const second = setup({ pods: 3, capacity: 4 });
    for (const run of first.h.binder.stored.values()) second.h.upsert(run);
    second.h.drain();
    await flush();
    const all = [...first.h.binder.bound, ...second.h.binder.bound];
    expect(new Set(all.map((b) => b.run)).size).toBe(all.length);
    expect(all.length).toBe(12);
    for (const used of perPod(second.h).values()) expect(used).toBe(4);
  });

  test("a recovered Run (attempt 2) waits out its retry backoff", () => {
    const { h, clock, timers } = setup();
    const sentBack = new Date(clock.now()).toISOString();
    h.upsert(
      aRun({
        name: "a",
        retry: { maxAttempts: 3, backoff: { initial: "2s" } },
        status: {
          phase: "Pending",
          attempt: 2,
          conditions: [
            {
              type: "Scheduled",
              status: "False",
              reason: "PodGone",
              message: "",
              lastTransitionTime: sentBack,
            },
          ],
        },
      }),
    );
    expect(h.drain()).toBe(0);
    timers.advance(2_000);
    expect(h.drain()).toBe(1);
  });
});
