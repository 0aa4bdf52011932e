/**
 * The autoscaler's reconcile against the real scheduler cache (pods, heartbeats, assumed Runs)
 * with a recording writer in place of the API: what it writes, in which order, and when.
 */
import { describe, expect, test } from "bun:test";
import type { Runtime } from "@kruntimes/api";
import pino from "pino";
import { Registry } from "prom-client";
import type { EventRecorder } from "../events/event-recorder.ts";
import type { Deployment } from "../kube-types.ts";
import { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import type { QueuedRun } from "../scheduler/queue/queued-run.ts";
import { aLease, aPod, aRuntime } from "../testing/fixtures.ts";
import { ManualClock } from "../util/clock.ts";
import { ManualTimers } from "../util/timers.ts";
import { AutoscaleMetrics } from "./autoscale-metrics.ts";
import { AutoscalerReconciler } from "./autoscaler-reconciler.ts";
import type { PoolWrites } from "./pool-writes.ts";

const OWNED = [
  {
    manager: "kruntimes-controller-autoscaler",
    operation: "Apply",
    subresource: "scale",
    fieldsV1: { "f:spec": { "f:replicas": {} } },
  },
];

function setup(
  pods: { name: string; runs: number }[],
  autoscaling: Runtime["spec"]["autoscaling"],
  owned = true,
) {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const noop = () => {};
  const cache = new SchedulerCache(
    { podFreed: noop, runtimePodsChanged: noop, podTrouble: noop, runtimeChanged: noop },
    clock,
    timers,
    { staleAfterMs: 60_000, assumeTtlMs: 600_000 },
  );
  const rt = { ...aRuntime("rt", { runs: 2 }), spec: { ...aRuntime("rt", { runs: 2 }).spec, autoscaling } };
  cache.upsertRuntime(rt);
  for (const p of pods) {
    cache.upsertPod(aPod({ name: p.name, capacity: { runs: 2 } }));
    cache.upsertLease(aLease(p.name, `uid-${p.name}`, clock.now()));
    const info = cache.pod(`ns/${p.name}`);
    if (!info) throw new Error("no pod");
    for (let i = 0; i < p.runs; i++)
      cache.assume(`ns/${p.name}-run${i}`, info, 1, {
        key: `ns/${p.name}-run${i}`,
        runtimeKey: "ns/rt",
        names: ["runs"],
        amounts: [1],
        namespace: "ns",
        labels: {},
        priority: 0,
      });
  }
  const dep: Deployment = {
    metadata: {
      name: "rt",
      namespace: "ns",
      ...(owned ? { managedFields: OWNED } : {}),
    } as Deployment["metadata"],
    spec: { replicas: pods.length },
  };
  const writes: string[] = [];
  const fake = {
    fieldManager: "kruntimes-controller-autoscaler",
    scale: async (_ns: string, _d: string, n: number) => {
      writes.push(`scale ${n}`);
      dep.spec = { replicas: n };
      return n;
    },
    mark: async (_ns: string, pod: string, _uid: string, on: boolean) => {
      writes.push(`${on ? "mark" : "unmark"} ${pod}`);
    },
    release: async (_ns: string, pod: string) => {
      writes.push(`release ${pod}`);
    },
    delete: async (_ns: string, pod: string) => {
      writes.push(`delete ${pod}`);
    },
    status: async () => {},
  } as unknown as PoolWrites;
  const events: string[] = [];
  const recorder: EventRecorder = { record: (_t, _type, reason) => events.push(reason) };
  let queued: QueuedRun[] = [];
  const r = new AutoscalerReconciler({
    runtimes: { get: () => rt },
    deployments: { get: () => dep },
    cache,
    queue: { queued: () => queued },
    workspaces: { boundTo: (k) => new Set(k === "ns/ws" ? ["w"] : []) },
    writes: fake,
    events: recorder,
    metrics: new AutoscaleMetrics(new Registry()),
    clock,
    log: pino({ level: "silent" }),
  });
  const pend = (n: number) => {
    queued = Array.from(
      { length: n },
      (_, i) =>
        ({ key: `ns/p${i}`, runtimeKey: "ns/rt", names: ["runs"], amounts: [1] }) as unknown as QueuedRun,
    );
  };
  return { r, clock, cache, writes, events, dep, pend };
}

const policy = {
  minReplicas: 1,
  maxReplicas: 3,
  targetUtilization: 1,
  scaleDownDelay: "2s",
  drainTimeout: "10s",
};

describe("AutoscalerReconciler", () => {
  test("an empty pod goes after the delay: marked, released, scaled down, deleted — in that order", async () => {
    const t = setup(
      [
        { name: "a", runs: 1 },
        { name: "b", runs: 0 },
      ],
      policy,
    );
    await t.r.reconcile("ns/rt");
    expect(t.writes).toEqual([]);
    t.clock.advance(2_500);
    await t.r.reconcile("ns/rt");
    expect(t.writes).toEqual(["mark b", "release b", "scale 1", "delete b"]);
    expect(t.events).toEqual(["ScaleDownStarted", "ScaleDown"]);
  });

  test("a busy pod drains: nothing placed there, kept until empty or the timeout, then given back", async () => {
    const t = setup(
      [
        { name: "a", runs: 2 },
        { name: "b", runs: 1 },
        { name: "c", runs: 1 },
      ],
      {
        ...policy,
        maxReplicas: 2,
      },
    );
    await t.r.reconcile("ns/rt");
    t.clock.advance(2_500);
    await t.r.reconcile("ns/rt");
    // 4 Runs at 2 per pod want 2 pods: the emptiest busy pod drains.
    expect(t.writes).toEqual(["mark c"]);
    expect(t.cache.pod("ns/c")?.isAvailable(t.clock.now())).toBe(false);
    t.clock.advance(5_000);
    await t.r.reconcile("ns/rt");
    expect(t.writes).toEqual(["mark c"]);
    t.clock.advance(5_000);
    await t.r.reconcile("ns/rt");
    expect(t.writes.slice(0, 2)).toEqual(["mark c", "unmark c"]);
    expect(t.events).toContain("DrainTimedOut");
    expect(t.cache.pod("ns/c")?.drainMarked).toBe(false);
    expect(t.dep.spec?.replicas).toBe(3);
  });

  test("a backlog gives a draining pod back before scaling up", async () => {
    const t = setup(
      [
        { name: "a", runs: 1 },
        { name: "b", runs: 1 },
      ],
      policy,
    );
    await t.r.reconcile("ns/rt");
    t.clock.advance(2_500);
    await t.r.reconcile("ns/rt");
    expect(t.writes).toEqual(["mark b"]);
    t.pend(4);
    await t.r.reconcile("ns/rt");
    // 2 in use + 4 pending at 2 per pod: 3 pods — b comes back, then one more.
    expect(t.writes).toEqual(["mark b", "unmark b", "scale 3"]);
    expect(t.events).toEqual(["ScaleDownStarted", "DrainCancelled", "ScaleUp"]);
  });

  test("the first look takes ownership of the replica count at its current value", async () => {
    const t = setup([{ name: "a", runs: 1 }], policy, false);
    await t.r.reconcile("ns/rt");
    expect(t.writes).toEqual(["scale 1"]);
  });

  test("a new leader carries on the drain a previous one marked on the pod", async () => {
    const t = setup(
      [
        { name: "a", runs: 1 },
        { name: "b", runs: 1 },
      ],
      policy,
    );
    t.cache.upsertPod(
      aPod({ name: "b", capacity: { runs: 2 }, annotations: { "kruntimes.io/scale-down": "x" } }),
    );
    await t.r.reconcile("ns/rt");
    // Neither given back nor marked again: still draining, removed once empty.
    expect(t.writes).toEqual([]);
    expect(t.cache.pod("ns/b")?.isAvailable(t.clock.now())).toBe(false);
  });

  test("a pod with a bound workspace is never drained", async () => {
    const t = setup(
      [
        { name: "a", runs: 1 },
        { name: "ws", runs: 0 },
      ],
      policy,
    );
    await t.r.reconcile("ns/rt");
    t.clock.advance(2_500);
    await t.r.reconcile("ns/rt");
    expect(t.writes).toEqual(["mark a"]);
  });
});
