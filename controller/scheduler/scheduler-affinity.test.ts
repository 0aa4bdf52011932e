/**
 * The scheduler with Run affinity and priority in play, in process: the production cache,
 * queue, plugins and bind tracker, with an in-memory binder (optionally never confirming binds,
 * so placements stay assumed).
 */
import { describe, expect, test } from "bun:test";
import { type Affinity, Reason, type Run, TopologyKeys } from "@kruntimes/api";
import { aLease, aPod, aRun, aRuntime, type RunFixture } from "../testing/fixtures.ts";
import { type Harness, schedulerHarness } from "../testing/scheduler-harness.ts";
import { ManualClock } from "../util/clock.ts";
import { ManualTimers } from "../util/timers.ts";

const TOPOLOGY = TopologyKeys.runtimePod;
const term = (matchLabels: Record<string, string>) => ({
  labelSelector: { matchLabels },
  topologyKey: TOPOLOGY,
});
const together = (labels: Record<string, string>): Affinity => ({
  runAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] },
});
const apart = (labels: Record<string, string>): Affinity => ({
  runAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] },
});

function world(o: { pods?: number; capacity?: number; confirm?: boolean; clock?: ManualClock } = {}) {
  const clock = o.clock ?? new ManualClock();
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

const flush = () => new Promise((r) => setImmediate(r));

/** The pod each bound Run went to (the binder's record). */
function podOf(h: Harness, name: string): string | undefined {
  return h.binder.bound.find((b) => b.run === `ns/${name}`)?.pod;
}

function finish(h: Harness, name: string): void {
  const run = h.binder.stored.get(`ns/${name}`) as Run;
  h.upsert({ ...run, status: { ...run.status, phase: "Succeeded" } });
}

const add = (h: Harness, f: RunFixture) => h.upsert(aRun(f));

describe("Scheduler with Run affinity", () => {
  test("a cohort lands on one pod while its binds are only assumed (never confirmed)", async () => {
    const { h } = world({ confirm: false });
    for (let i = 0; i < 4; i++)
      add(h, { name: `m${i}`, labels: { job: "a" }, affinity: together({ job: "a" }) });
    h.drain();
    await flush();
    const pods = new Set([0, 1, 2, 3].map((i) => podOf(h, `m${i}`)));
    expect(pods.size).toBe(1);
    expect(h.scheduler.cache.accounts.assumedCount).toBe(4);
  });

  test("a follower that cannot seed waits (Unschedulable, term named) and is woken by its leader's placement", async () => {
    const { h } = world();
    add(h, { name: "f", labels: { role: "follower" }, affinity: together({ job: "a" }) });
    h.drain();
    const waiting = h.scheduler.queue.get("ns/f");
    expect(waiting?.state).toBe("parked");
    expect(waiting?.waiting?.reason).toBe(Reason.Unschedulable);
    expect(waiting?.waiting?.message).toStartWith("waiting for a Run matching job=a on the same pod");
    add(h, { name: "leader", labels: { job: "a" } });
    h.drain();
    await flush();
    expect(h.wakeups.get("affinity_target")).toBe(1);
    expect(podOf(h, "f")).toBe(podOf(h, "leader") as string);
  });

  test("the cohort's pod full: the follower waits for a release there, not elsewhere", async () => {
    const { h } = world({ pods: 2, capacity: 2 });
    add(h, { name: "leader", labels: { job: "a" } });
    add(h, { name: "filler", labels: { x: "1" } });
    h.drain();
    await flush();
    const cohortPod = podOf(h, "leader");
    // Fill the cohort's pod, then the follower arrives.
    add(h, { name: "second", labels: { job: "a" }, affinity: together({ job: "a" }) });
    h.drain();
    await flush();
    expect(podOf(h, "second")).toBe(cohortPod as string);
    add(h, { name: "f", affinity: together({ job: "a" }) });
    h.drain();
    expect(h.scheduler.queue.get("ns/f")?.waiting?.reason).toBe(Reason.InsufficientCapacity);
    // A release on the other pod does not wake it (it could not go there).
    finish(h, "filler");
    expect(h.scheduler.queue.get("ns/f")?.state).toBe("parked");
    // A release on the cohort's pod does, and the follower lands there.
    finish(h, "second");
    expect(h.scheduler.queue.get("ns/f")?.state).toBe("active");
    h.drain();
    await flush();
    expect(podOf(h, "f")).toBe(cohortPod as string);
  });

  test("anti-affinity spreads Runs one per pod; the extra one waits until a pod is free of them", async () => {
    const { h } = world({ pods: 3, capacity: 4 });
    for (let i = 0; i < 4; i++)
      add(h, { name: `w${i}`, labels: { app: "web" }, affinity: apart({ app: "web" }) });
    h.drain();
    await flush();
    expect(new Set([0, 1, 2].map((i) => podOf(h, `w${i}`))).size).toBe(3);
    expect(h.scheduler.queue.get("ns/w3")?.waiting?.reason).toBe(Reason.Unschedulable);
    finish(h, "w1");
    h.drain();
    await flush();
    expect(podOf(h, "w3")).toBe(podOf(h, "w1") as string);
  });

  test("symmetry: a placed Run's anti-affinity keeps a plain Run with matching labels away", async () => {
    const { h } = world({ pods: 2, capacity: 4 });
    add(h, { name: "db", labels: { tier: "db" }, affinity: apart({ tier: "db" }) });
    h.drain();
    await flush();
    for (let i = 0; i < 3; i++) add(h, { name: `d${i}`, labels: { tier: "db" } });
    h.drain();
    await flush();
    for (let i = 0; i < 3; i++) expect(podOf(h, `d${i}`)).not.toBe(podOf(h, "db") as string);
  });

  test("a restarted scheduler rebuilds the placements from Run state: the cohort stays together", async () => {
    const first = world({ confirm: false });
    add(first.h, { name: "leader", labels: { job: "a" }, affinity: together({ job: "a" }) });
    first.h.drain();
    await flush();
    const cohortPod = podOf(first.h, "leader");
    // A new leader relists: the bind landed (the store has it), the assumption is gone.
    const second = world({ clock: first.clock });
    for (const run of first.h.binder.stored.values()) second.h.upsert(run);
    for (let i = 0; i < 3; i++) {
      add(second.h, { name: `m${i}`, labels: { job: "a" }, affinity: together({ job: "a" }) });
    }
    second.h.drain();
    await flush();
    for (let i = 0; i < 3; i++) expect(podOf(second.h, `m${i}`)).toBe(cohortPod as string);
  });

  test("preferred affinity picks the cohort's pod when it has room, else any", async () => {
    const { h } = world({ pods: 3, capacity: 2 });
    add(h, { name: "leader", labels: { cache: "warm" } });
    h.drain();
    await flush();
    const prefer: Affinity = {
      runAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 50, runAffinityTerm: term({ cache: "warm" }) },
        ],
      },
    };
    add(h, { name: "p1", affinity: prefer });
    add(h, { name: "p2", affinity: prefer });
    h.drain();
    await flush();
    expect(podOf(h, "p1")).toBe(podOf(h, "leader") as string);
    expect(podOf(h, "p2")).not.toBe(podOf(h, "leader") as string);
  });
});

describe("Scheduler with priority", () => {
  test("in a full pool, each release goes to the highest priority waiting Run", async () => {
    const { h, clock } = world({ pods: 1, capacity: 1 });
    add(h, { name: "holder" });
    h.drain();
    await flush();
    const t = clock.now();
    add(h, { name: "low", priority: -10, createdMs: t });
    add(h, { name: "mid", priority: 0, createdMs: t });
    add(h, { name: "high", priority: 10, createdMs: t });
    h.drain();
    const order: string[] = [];
    let current = "holder";
    for (let i = 0; i < 3; i++) {
      finish(h, current);
      h.drain();
      await flush();
      const next = h.binder.bound.at(-1)?.run.slice(3) as string;
      order.push(next);
      current = next;
    }
    expect(order).toEqual(["high", "mid", "low"]);
  });

  test("aging: a low priority Run that waited long enough goes before a newer higher one", async () => {
    const { h, clock } = world({ pods: 1, capacity: 1 });
    add(h, { name: "holder" });
    h.drain();
    await flush();
    add(h, { name: "old-low", priority: 0, createdMs: clock.now() });
    h.drain();
    clock.advance(30_000); // 30 intervals of aging
    h.scheduler.cache.upsertLease(aLease("p0", "uid-p0", clock.now()));
    add(h, { name: "new-high", priority: 20, createdMs: clock.now() });
    add(h, { name: "new-top", priority: 40, createdMs: clock.now() });
    h.drain();
    const order: string[] = [];
    let current = "holder";
    for (let i = 0; i < 3; i++) {
      finish(h, current);
      h.drain();
      await flush();
      current = h.binder.bound.at(-1)?.run.slice(3) as string;
      order.push(current);
    }
    expect(order).toEqual(["new-top", "old-low", "new-high"]);
  });
});

describe("Scheduler hand-on of freed capacity", () => {
  test("a woken Run that lands elsewhere hands the pod it was woken for on to the next Run", async () => {
    const { h } = world({ pods: 0 });
    const clock = new ManualClock();
    h.scheduler.cache.upsertPod(aPod({ name: "p0", capacity: { runs: 2 } }));
    h.scheduler.cache.upsertPod(aPod({ name: "p1", capacity: { runs: 1 } }));
    for (const p of ["p0", "p1"]) h.scheduler.cache.upsertLease(aLease(p, `uid-${p}`, clock.now()));
    add(h, { name: "warm", labels: { cache: "warm" } });
    add(h, { name: "filler" });
    add(h, { name: "x" });
    h.drain();
    await flush();
    expect([podOf(h, "warm"), podOf(h, "filler"), podOf(h, "x")]).toEqual(["p0", "p0", "p1"]);
    const prefer: Affinity = {
      runAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, runAffinityTerm: term({ cache: "warm" }) },
        ],
      },
    };
    add(h, { name: "r", priority: 10, affinity: prefer });
    add(h, { name: "s", priority: 5, affinity: together({ cache: "warm" }) });
    add(h, { name: "t", priority: 0 });
    h.drain();
    expect(h.scheduler.queue.sizes.parked).toBe(3);
    // p1 frees: r (best) is woken for it. p0 frees: s (it may only go there) is woken for it.
    finish(h, "x");
    finish(h, "filler");
    expect(h.scheduler.queue.sizes).toEqual({ active: 2, backoff: 0, parked: 1 });
    // r prefers p0 and takes it; s finds p0 full and parks again; p1 must not stay idle.
    h.drain();
    await flush();
    expect(podOf(h, "r")).toBe("p0");
    expect(podOf(h, "t")).toBe("p1");
    expect(h.wakeups.get("handoff")).toBe(1);
    expect(h.scheduler.queue.get("ns/s")?.state).toBe("parked");
  });
});
