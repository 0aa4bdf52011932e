import { describe, expect, test } from "bun:test";
import {
  bucketOf,
  compactRows,
  diffBy,
  metricValue,
  PhaseTally,
  quantile,
  type Sample,
  schedulerFromMetrics,
  sumBy,
  summarize,
  timeReaching,
  UNATTRIBUTED,
} from "./series.ts";

function sample(
  t: number,
  o: Partial<Sample> & { succeeded?: number; pending?: number; running?: number },
): Sample {
  return {
    t,
    created: o.created ?? 100,
    counts: { pending: o.pending ?? 0, running: o.running ?? 0, succeeded: o.succeeded ?? 0, failed: 0 },
    controller: o.controller ?? { rssBytes: 100 * 1024 * 1024, heapBytes: 10 },
    scheduler: {
      active: 0,
      parked: 0,
      backoff: 0,
      bindsInFlight: 0,
      pendingThatFits: 0,
      held: 0,
      assumed: 0,
      cycleSeconds: 0,
      cycles: 0,
      bindSeconds: 0,
      binds: 0,
      ...o.scheduler,
    },
    cpu: o.cpu ?? {},
    rss: {},
    machine: o.machine ?? { busySeconds: 0, totalSeconds: 0 },
  };
}

describe("scale series", () => {
  test("buckets: no status and Pending wait; placed phases run; terminal phases end", () => {
    expect(
      [undefined, "Pending", "Scheduled", "Running", "Finalizing", "Succeeded", "Failed", "Timeout"].map(
        bucketOf,
      ),
    ).toEqual(["pending", "pending", "running", "running", "running", "succeeded", "failed", "failed"]);
  });

  test("PhaseTally counts per watch event, each name once", () => {
    const t = new PhaseTally();
    expect(t.set("a", undefined)).toBe("pending");
    t.set("b", "Pending");
    expect(t.set("a", "Pending")).toBeUndefined();
    t.set("a", "Scheduled");
    t.set("a", "Running");
    t.set("b", "Succeeded");
    expect(t.snapshot()).toEqual({ pending: 0, running: 1, succeeded: 1, failed: 0 });
    t.remove("a");
    t.remove("zz");
    expect(t.snapshot()).toEqual({ pending: 0, running: 0, succeeded: 1, failed: 0 });
    expect(t.seen).toBe(1);
    expect(t.flips).toEqual([]);
  });

  test("PhaseTally records a terminal phase that changes (recovery's Failed overwritten by a late Succeeded)", () => {
    const t = new PhaseTally();
    t.set("a", "Scheduled");
    t.set("a", "Failed");
    t.set("a", "Succeeded");
    t.set("b", "Succeeded");
    t.set("b", "Succeeded");
    t.set("c", "Failed");
    t.set("c", "Timeout");
    expect(t.flips).toEqual(["a: Failed → Succeeded", "c: Failed → Timeout"]);
    expect(t.snapshot()).toEqual({ pending: 0, running: 0, succeeded: 2, failed: 1 });
  });

  test("metric values: exact labels, unlabelled, or summed over all series", () => {
    const text = [
      "# HELP x",
      'kruntimes_scheduler_queue_depth{queue="active"} 3',
      'kruntimes_scheduler_queue_depth{queue="parked"} 120',
      "kruntimes_scheduler_binds_in_flight 7",
      "kruntimes_scheduler_pending_fitting_runs 0",
      'kruntimes_scheduler_capacity_held{resource="runs"} 150',
      "kruntimes_scheduler_assumed_runs 4",
      'kruntimes_scheduler_cycle_duration_seconds_sum{result="scheduled"} 0.25',
      'kruntimes_scheduler_cycle_duration_seconds_sum{result="unschedulable"} 0.5',
      'kruntimes_scheduler_cycle_duration_seconds_count{result="scheduled"} 1000',
      'kruntimes_scheduler_cycle_duration_seconds_count{result="unschedulable"} 500',
      "kruntimes_scheduler_bind_duration_seconds_sum 2",
      "kruntimes_scheduler_bind_duration_seconds_count 40",
    ].join("\n");
    expect(metricValue(text, "kruntimes_scheduler_binds_in_flight")).toBe(7);
    expect(metricValue(text, "kruntimes_scheduler_absent")).toBe(0);
    expect(schedulerFromMetrics(text)).toEqual({
      active: 3,
      parked: 120,
      backoff: 0,
      bindsInFlight: 7,
      pendingThatFits: 0,
      held: 150,
      assumed: 4,
      cycleSeconds: 0.75,
      cycles: 1500,
      bindSeconds: 2,
      binds: 40,
    });
  });

  test("sumBy: sums by label values, filtered; diffBy: after − before", () => {
    const text = [
      'apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="service-accounts",priority_level="workload-low"} 12.5',
      'apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="false",flow_schema="service-accounts",priority_level="workload-low"} 99',
      'apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="exempt",priority_level="exempt"} 0.5',
      'apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="other",priority_level="exempt"} 0.25',
      'kruntimes_recovery_total{reason="PodUnhealthy",action="failed"} 59',
    ].join("\n");
    const wait = sumBy(text, "apiserver_flowcontrol_request_wait_duration_seconds_sum", ["priority_level"], {
      execute: "true",
    });
    expect([...wait]).toEqual([
      ["workload-low", 12.5],
      ["exempt", 0.75],
    ]);
    expect([...sumBy(text, "kruntimes_recovery_total", ["reason", "action"])]).toEqual([
      ["PodUnhealthy/failed", 59],
    ]);
    expect([
      ...diffBy(
        new Map([
          ["a", 1],
          ["b", 2],
        ]),
        new Map([
          ["a", 1],
          ["b", 5],
          ["c", 1],
        ]),
      ),
    ]).toEqual([
      ["b", 3],
      ["c", 1],
    ]);
  });

  test("timeReaching interpolates between samples; quantile is nearest-rank", () => {
    const s = [sample(0, { succeeded: 0 }), sample(2, { succeeded: 10 }), sample(4, { succeeded: 30 })];
    expect(timeReaching(s, (x) => x.counts.succeeded, 5)).toBe(1);
    expect(timeReaching(s, (x) => x.counts.succeeded, 20)).toBe(3);
    expect(timeReaching(s, (x) => x.counts.succeeded, 31)).toBeUndefined();
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(quantile([1, 2, 3, 4], 1)).toBe(4);
  });

  test("summary: throughput overall and between 10 % and 90 %, Little's law, scheduler busy share, CPU shares", () => {
    // 100 Runs: 0 at t=0, 10 at t=2, 90 at t=10, 100 at t=12; 20 in flight during the steady part.
    const s = [
      sample(0, {
        pending: 100,
        scheduler: { cycleSeconds: 1, cycles: 10 } as Sample["scheduler"],
        cpu: { etcd: 5 },
      }),
      sample(2, {
        succeeded: 10,
        pending: 70,
        running: 20,
        scheduler: {
          cycleSeconds: 1.01,
          cycles: 40,
          pendingThatFits: 3,
          bindsInFlight: 32,
        } as Sample["scheduler"],
      }),
      sample(6, {
        succeeded: 50,
        pending: 30,
        running: 20,
        scheduler: {
          cycleSeconds: 1.02,
          cycles: 80,
          bindsInFlight: 9,
          pendingThatFits: 1,
          assumed: 30,
        } as Sample["scheduler"],
      }),
      sample(10, {
        succeeded: 90,
        running: 10,
        scheduler: { cycleSeconds: 1.03, cycles: 100 } as Sample["scheduler"],
      }),
      sample(12, {
        succeeded: 100,
        scheduler: { cycleSeconds: 1.036, cycles: 110 } as Sample["scheduler"],
        cpu: { etcd: 11, "kube-apiserver": 18 },
        controller: { rssBytes: 150 * 1024 * 1024, heapBytes: 20 },
        machine: { busySeconds: 18, totalSeconds: 24 },
      }),
    ];
    const m = summarize(s, 100);
    expect(m.wallSeconds).toBe(12);
    expect(m.throughput).toBeCloseTo(100 / 12, 9);
    expect(m.steadyWindow).toEqual([2, 10]);
    expect(m.steadyThroughput).toBe(10);
    expect(m.meanInFlight).toBeCloseTo((20 + 20 + 10) / 3, 9);
    expect(m.meanHeld).toBe(0);
    expect(m.meanAssumed).toBe(10);
    expect(m.confirmLagSeconds).toBe(1);
    expect(m.slotHoldSeconds).toBeCloseTo(50 / 3 / 10, 9);
    expect(m.maxPending).toBe(100);
    expect(m.controllerRssMax).toBe(150 * 1024 * 1024);
    expect(m.scheduler.cycles).toBe(100);
    expect(m.scheduler.busyShare).toBeCloseTo(0.036 / 12, 9);
    expect(m.scheduler.meanCycleMicros).toBeCloseTo(360, 6);
    expect(m.scheduler.maxIntervalBusyShare).toBeCloseTo(0.005, 9);
    expect(m.scheduler.pendingThatFitsMax).toBe(3);
    // 3 samples with Pending Runs: one with fits while every bind slot was in use, one with slots free
    expect(m.scheduler.pendingThatFitsNonZeroShare).toBeCloseTo(2 / 3, 9);
    expect(m.scheduler.fitsWhileBindSlotsFreeShare).toBeCloseTo(1 / 3, 9);
    expect(m.scheduler.bindSlotsFullShare).toBeCloseTo(1 / 3, 9);
    expect(m.scheduler.bindsInFlightMax).toBe(32);
    expect(m.cpu).toEqual([
      { group: "kube-apiserver", seconds: 18, coreShare: 1.5 },
      { group: "etcd", seconds: 6, coreShare: 0.5 },
    ]);
    expect(m.machineBusyShare).toBe(0.75);
    // Busy CPU no group accounts for is shown as its own line.
    const more = s.map((x) => ({ ...x, machine: { ...x.machine } }));
    (more.at(-1) as Sample).machine.busySeconds = 30;
    expect(summarize(more, 100).cpu.at(-1)).toEqual({ group: UNATTRIBUTED, seconds: 6, coreShare: 0.5 });
  });

  test("compact rows every N seconds with rates over each interval, and the last sample always", () => {
    const s = Array.from({ length: 12 }, (_, i) =>
      sample(i, {
        succeeded: i * 10,
        cpu: { etcd: i / 2 },
        machine: { busySeconds: i, totalSeconds: 2 * i },
      }),
    );
    const rows = compactRows(s, 5);
    expect(rows.map((r) => r.t)).toEqual([5, 10, 11]);
    expect(rows[0]?.rate).toBe(10);
    expect(rows[0]?.cpu.etcd).toBe(0.5);
    expect(rows[0]?.machineBusy).toBe(0.5);
  });
});
