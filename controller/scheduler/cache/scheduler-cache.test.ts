import { describe, expect, test } from "bun:test";
import { aLease, aPod, aRun, aRuntime, boundTo } from "../../testing/fixtures.ts";
import { ManualClock } from "../../util/clock.ts";
import { ManualTimers } from "../../util/timers.ts";
import { requestOf } from "../run-request.ts";
import { compileSelector } from "./label-selector.ts";
import { type FreedBy, SchedulerCache } from "./scheduler-cache.ts";

function setup() {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const events = {
    freed: [] as [string, FreedBy][],
    availability: [] as string[],
    trouble: [] as string[],
    runtimes: [] as string[],
  };
  const cache = new SchedulerCache(
    {
      podFreed: (p, by) => events.freed.push([p.name, by]),
      runtimePodsChanged: (rt) => events.availability.push(rt),
      podTrouble: (p) => events.trouble.push(p),
      runtimeChanged: (rt) => events.runtimes.push(rt),
    },
    clock,
    timers,
    { staleAfterMs: 15_000, assumeTtlMs: 30_000 },
  );
  const livePod = (name: string, capacity = { runs: 2 }) => {
    cache.upsertPod(aPod({ name, capacity }));
    cache.upsertLease(aLease(name, `uid-${name}`, clock.now()));
  };
  return { clock, timers, cache, events, livePod };
}

describe("SchedulerCache accounting", () => {
  test("capacity in use is the sum of requests of non-terminal Runs assigned to the pod", () => {
    const { cache, livePod } = setup();
    livePod("p1", { runs: 8 });
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1") }));
    cache.upsertRun(aRun({ name: "b", requests: { runs: 3 }, status: boundTo("p1", 1, "Running") }));
    cache.upsertRun(aRun({ name: "c", status: boundTo("p1", 1, "Succeeded") }));
    cache.upsertRun(aRun({ name: "d" }));
    expect(cache.pod("ns/p1")?.used).toEqual({ runs: 4 });
  });

  test("accounting does not depend on whether the pod or the Run was seen first", () => {
    const { cache, livePod } = setup();
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1") }));
    livePod("p1");
    expect(cache.pod("ns/p1")?.used).toEqual({ runs: 1 });
  });

  test("a session seals its pod while it holds it and after it ended (the pod is spent)", () => {
    const { cache, livePod } = setup();
    livePod("p1", { runs: 8 });
    livePod("p2", { runs: 8 });
    cache.upsertRun(aRun({ name: "t", status: boundTo("p2") }));
    expect(cache.pod("ns/p1")?.sealed).toBe(false);
    expect(cache.pod("ns/p2")?.occupied).toBe(true);
    cache.upsertRun(aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Ready") }));
    expect(cache.pod("ns/p1")?.sealed).toBe(true);
    cache.upsertRun(aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Succeeded") }));
    expect(cache.pod("ns/p1")?.occupied).toBe(false);
    expect(cache.pod("ns/p1")?.sealed).toBe(true);
    // A new incarnation of the pod (the Deployment's replacement under the same name) is fresh.
    cache.upsertPod(aPod({ name: "p1", uid: "uid-p1-new", capacity: { runs: 8 } }));
    expect(cache.pod("ns/p1")?.sealed).toBe(false);
  });

  test("a Run finishing releases capacity and reports the pod freed", () => {
    const { cache, livePod, events } = setup();
    livePod("p1");
    events.freed.length = 0;
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1") }));
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1", 1, "Succeeded") }));
    expect(cache.pod("ns/p1")?.used).toEqual({ runs: 0 });
    expect(events.freed).toEqual([["p1", "capacity_released"]]);
  });

  test("held totals sum every pod incarnation and return to zero when the Runs end", () => {
    const { cache, livePod } = setup();
    livePod("p1", { runs: 8 });
    livePod("p2", { runs: 8 });
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1") }));
    cache.upsertRun(aRun({ name: "b", requests: { runs: 3 }, status: boundTo("p2", 1, "Running") }));
    expect(cache.accounts.heldTotals()).toEqual({ runs: 4 });
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1", 1, "Succeeded") }));
    cache.deleteRun("ns/b");
    expect(cache.accounts.heldTotals()).toEqual({ runs: 0 });
  });

  test("Runs on a replaced pod (same name, new UID) do not count against the new pod", () => {
    const { cache, livePod, events } = setup();
    livePod("p1");
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1") }));
    cache.upsertPod(aPod({ name: "p1", uid: "uid-new" }));
    expect(cache.pod("ns/p1")?.used).toEqual({});
    expect(events.trouble).toContain("ns/p1");
    expect(cache.accounts.runsOn("ns/p1")).toEqual(["ns/a"]);
  });

  test("an assumed bind holds capacity through stale Pending events and is confirmed by the bound one", () => {
    const { cache, livePod } = setup();
    livePod("p1");
    const pod = cache.pod("ns/p1");
    if (!pod) throw new Error("no pod");
    cache.assume("ns/a", pod, 1, requestOf(aRun({ name: "a" })));
    cache.upsertRun(aRun({ name: "a" }));
    expect(cache.isAssumed("ns/a")).toBe(true);
    expect(pod.used).toEqual({ runs: 1 });
    cache.upsertRun(aRun({ name: "a", status: boundTo("p1") }));
    expect(cache.isAssumed("ns/a")).toBe(false);
    expect(pod.used).toEqual({ runs: 1 });
  });

  test("an unconfirmed assumption expires after the TTL and frees the capacity", () => {
    const { cache, livePod, clock } = setup();
    livePod("p1");
    const pod = cache.pod("ns/p1");
    if (!pod) throw new Error("no pod");
    cache.assume("ns/a", pod, 1, requestOf(aRun({ name: "a" })));
    clock.advance(29_999);
    expect(cache.expireAssumed()).toEqual([]);
    clock.advance(1);
    expect(cache.expireAssumed()).toEqual(["ns/a"]);
    expect(pod.used).toEqual({ runs: 0 });
  });
});

describe("SchedulerCache availability", () => {
  test("a pod becomes available with a Ready condition and a fresh Lease held by its UID", () => {
    const { cache, clock, events } = setup();
    cache.upsertPod(aPod({ name: "p1", ready: false }));
    cache.upsertLease(aLease("p1", "uid-p1", clock.now()));
    expect(cache.availableCount("ns/rt")).toBe(0);
    cache.upsertPod(aPod({ name: "p1" }));
    expect(cache.availableCount("ns/rt")).toBe(1);
    expect(events.freed).toEqual([["p1", "pod_available"]]);
  });

  test("the heartbeat expires by time alone, and goes stale (trouble) later", () => {
    const { cache, livePod, timers, events } = setup();
    livePod("p1");
    events.availability.length = 0;
    timers.advance(10_000);
    expect(cache.availableCount("ns/rt")).toBe(0);
    expect(events.availability).toEqual(["ns/rt"]);
    expect(events.trouble).toEqual([]);
    timers.advance(5_000);
    expect(events.trouble).toEqual(["ns/p1"]);
  });

  test("a relisted Lease watch restarts every pod's stale period: renewals not seen are not silence", () => {
    const { cache, timers, livePod, events } = setup();
    livePod("p1");
    timers.advance(10_000); // the watch is down: no renewal seen for 10 s
    cache.leasesRelisted();
    timers.advance(14_000);
    expect(events.trouble).toEqual([]);
    timers.advance(1_000);
    expect(events.trouble).toEqual(["ns/p1"]);
  });

  test("renewals observed locally keep the pod fresh whatever the Lease's clock says", () => {
    const { cache, livePod, clock, timers } = setup();
    livePod("p1");
    for (let i = 0; i < 10; i++) {
      timers.advance(2_000);
      // A renewer whose clock is an hour behind: each change still counts as a renewal now.
      cache.upsertLease(aLease("p1", "uid-p1", clock.now() - 3_600_000 + i));
    }
    expect(cache.availableCount("ns/rt")).toBe(1);
  });

  test("terminating and deleted pods are trouble for their Runs", () => {
    const { cache, livePod, events } = setup();
    livePod("p1");
    livePod("p2");
    cache.upsertPod(aPod({ name: "p1", terminating: true }));
    cache.deletePod(aPod({ name: "p2" }));
    expect(events.trouble).toEqual(["ns/p1", "ns/p2"]);
    expect(cache.podsOf("ns/rt").map((p) => p.name)).toEqual(["p1"]);
  });

  test("a capacity change of the Runtime is reported, an unchanged update is not", () => {
    const { cache, events } = setup();
    cache.upsertRuntime(aRuntime("rt", { runs: 4 }));
    cache.upsertRuntime(aRuntime("rt", { runs: 4 }));
    cache.upsertRuntime(aRuntime("rt", { runs: 6 }));
    expect(events.runtimes).toEqual(["ns/rt", "ns/rt"]);
    expect(cache.runtime("ns/rt")?.capacity).toEqual({ runs: 6 });
  });
});

describe("SchedulerCache placements (Run affinity's index)", () => {
  const jobA = compileSelector({ matchLabels: { job: "a" } });

  test("assumed and confirmed Runs are indexed with their labels; an expired assumption leaves", () => {
    const { cache, livePod, clock } = setup();
    livePod("p1");
    livePod("p2");
    const p1 = cache.pod("ns/p1");
    if (!p1) throw new Error("no pod");
    cache.assume("ns/a", p1, 1, requestOf(aRun({ name: "a", labels: { job: "a" } })));
    cache.upsertRun(aRun({ name: "b", labels: { job: "a" }, status: boundTo("p2") }));
    expect(new Map(cache.placements.countsOn("ns", jobA, ""))).toEqual(
      new Map([
        [p1.domain, 1],
        [cache.pod("ns/p2")?.domain as string, 1],
      ]),
    );
    clock.advance(30_000);
    cache.expireAssumed();
    expect(cache.placements.countsOn("ns", jobA, "").has(p1.domain)).toBe(false);
  });

  test("labels changed on a placed Run are reindexed (at confirmation and afterwards)", () => {
    const { cache, livePod } = setup();
    livePod("p1");
    const p1 = cache.pod("ns/p1");
    if (!p1) throw new Error("no pod");
    cache.assume("ns/a", p1, 1, requestOf(aRun({ name: "a", labels: { job: "x" } })));
    cache.upsertRun(aRun({ name: "a", labels: { job: "a" }, status: boundTo("p1") }));
    expect(cache.placements.countOn("ns", p1.domain, jobA, "")).toBe(1);
    cache.upsertRun(aRun({ name: "a", labels: { job: "b" }, status: boundTo("p1", 1, "Running") }));
    expect(cache.placements.countOn("ns", p1.domain, jobA, "")).toBe(0);
  });

  test("a finished Run leaves the index before its capacity release is reported", () => {
    const clock = new ManualClock();
    const timers = new ManualTimers(clock);
    const seen: number[] = [];
    const cache: SchedulerCache = new SchedulerCache(
      {
        podFreed: (p) => seen.push(cache.placements.countOn("ns", p.domain, jobA, "")),
        runtimePodsChanged: () => {},
        podTrouble: () => {},
        runtimeChanged: () => {},
      },
      clock,
      timers,
      { staleAfterMs: 15_000, assumeTtlMs: 30_000 },
    );
    cache.upsertPod(aPod({ name: "p1" }));
    cache.upsertLease(aLease("p1", "uid-p1", clock.now()));
    cache.upsertRun(aRun({ name: "a", labels: { job: "a" }, status: boundTo("p1") }));
    seen.length = 0;
    cache.upsertRun(aRun({ name: "a", labels: { job: "a" }, status: boundTo("p1", 1, "Succeeded") }));
    expect(seen).toEqual([0]);
  });

  test("Runs on a replaced pod do not count for its successor", () => {
    const { cache, livePod, clock } = setup();
    livePod("p1");
    cache.upsertRun(aRun({ name: "a", labels: { job: "a" }, status: boundTo("p1") }));
    cache.upsertPod(aPod({ name: "p1", uid: "uid-p1-new" }));
    cache.upsertLease(aLease("p1", "uid-p1-new", clock.now()));
    const p1 = cache.pod("ns/p1");
    expect(p1?.uid).toBe("uid-p1-new");
    expect(cache.placements.countOn("ns", p1?.domain as string, jobA, "")).toBe(0);
    expect(cache.placements.anyMatch("ns", jobA, "")).toBe(true);
  });
});
