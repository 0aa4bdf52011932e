import { describe, expect, test } from "bun:test";
import { Registry } from "prom-client";
import { type FitPod, pendingThatFits, SchedulerMetrics } from "./metrics.ts";
import type { QueueState } from "./queue/queued-run.ts";

function pod(
  capacity: Record<string, number>,
  used: Record<string, number>,
  o: Partial<FitPod> = {},
): FitPod {
  return {
    capacity,
    sealed: false,
    occupied: Object.values(used).some((v) => v > 0),
    free: (n) => (capacity[n] ?? 0) - (used[n] ?? 0),
    isAvailable: () => true,
    ...o,
  };
}

function run(runtimeKey: string, req: Record<string, number> = { runs: 1 }, state: QueueState = "active") {
  const names = Object.keys(req).sort();
  return { runtimeKey, names, amounts: names.map((n) => req[n] as number), state };
}

describe("pendingThatFits", () => {
  test("counts queued Runs up to the free room of their own Runtime's pods", () => {
    const pods: Record<string, FitPod[]> = {
      "ns/a": [pod({ runs: 4 }, { runs: 3 }), pod({ runs: 4 }, { runs: 2 })], // 3 free
      "ns/b": [pod({ runs: 4 }, { runs: 4 })], // full
    };
    const queued = [
      ...Array.from({ length: 5 }, () => run("ns/a")),
      ...Array.from({ length: 7 }, () => run("ns/b")),
    ];
    expect(pendingThatFits(queued, (rt) => pods[rt] ?? [], 0)).toBe(3);
  });

  test("unavailable and sealed pods offer nothing; backing-off Runs are not counted", () => {
    const pods = [
      pod({ runs: 8 }, {}, { isAvailable: () => false }),
      pod({ runs: 8 }, {}, { sealed: true }),
      pod({ runs: 8 }, { runs: 6 }),
    ];
    const queued = [
      run("ns/a", { runs: 1 }, "backoff"),
      run("ns/a"),
      run("ns/a", { runs: 1 }, "parked"),
      run("ns/a"),
    ];
    expect(pendingThatFits(queued, () => pods, 0)).toBe(2);
  });

  test("multi-resource requests use up each resource; a Run too big for any pod's room does not fit", () => {
    const pods = [pod({ runs: 4, gpu: 1 }, {}), pod({ runs: 4, gpu: 1 }, { gpu: 1 })];
    const queued = [
      run("ns/a", { runs: 1, gpu: 1 }),
      run("ns/a", { runs: 1, gpu: 1 }),
      run("ns/a", { runs: 5 }),
    ];
    expect(pendingThatFits(queued, () => pods, 0)).toBe(1);
  });

  test("an exclusive (session) Run needs a pod nothing holds, and takes all of it", () => {
    const pods = [pod({ runs: 4 }, { runs: 1 }), pod({ runs: 4 }, {})];
    const session = { ...run("ns/a"), exclusive: true };
    expect(pendingThatFits([session, session], () => pods, 0)).toBe(1);
    // The first Run takes room on the empty pod before the session can: greedy, in queue order.
    expect(pendingThatFits([run("ns/a"), run("ns/a"), session], () => [pod({ runs: 4 }, {})], 0)).toBe(2);
  });

  test("the gauges read the callbacks at scrape time", async () => {
    const registry = new Registry();
    let inFlight = 3;
    new SchedulerMetrics(
      registry,
      () => ({ active: 0, backoff: 0, parked: 0 }),
      () => 0,
      undefined,
      { bindsInFlight: () => inFlight, pendingThatFits: () => 7 },
    );
    let text = await registry.metrics();
    expect(text).toContain("kruntimes_scheduler_binds_in_flight 3");
    expect(text).toContain("kruntimes_scheduler_pending_fitting_runs 7");
    inFlight = 0;
    text = await registry.metrics();
    expect(text).toContain("kruntimes_scheduler_binds_in_flight 0");
  });
});
