import { describe, expect, test } from "bun:test";
import { Annotations, type Run } from "@kruntimes/api";
import { breakdown, runTimes, stagesOf } from "./breakdown.ts";

function run(name: string, timing: Record<string, number>, phase = "Succeeded", annotation?: number): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name, annotations: annotation ? { [Annotations.createdMicros]: String(annotation) } : {} },
    spec: { runtime: "bash", mode: { task: {} } },
    status: { phase: phase as "Succeeded", timing },
  };
}

describe("stages from status.timing and the watch", () => {
  test("each stage is the difference of its two stamps, in µs", () => {
    const t = runTimes({
      run: run("a", {
        createdMicros: 1000,
        scheduledMicros: 3500,
        startedMicros: 4000,
        finishedMicros: 9000,
        reportedMicros: 9200,
      }),
      seenMicros: 10_000,
      ackMicros: 1800,
      boundSeenMicros: 3700,
    });
    expect(t && stagesOf(t)).toEqual({
      create: 800,
      schedule: 2500,
      "bind-seen": 200,
      dispatch: 500,
      execution: 5000,
      report: 200,
      observe: 800,
      complete: 9000,
    });
  });
  test("created falls back to the annotation; missing stamps leave stages out", () => {
    const t = runTimes({ run: run("b", { scheduledMicros: 2000 }, "Failed", 1500), seenMicros: 5000 });
    expect(t && stagesOf(t)).toEqual({ schedule: 500, complete: 3500 });
    expect(runTimes({ run: run("c", {}), seenMicros: 1 })).toBeUndefined();
  });
});

describe("breakdown of a scenario", () => {
  // Three Runs on a 2-slot pool: c waits for a's slot.
  const samples = [
    {
      run: run("a", {
        createdMicros: 0,
        scheduledMicros: 1000,
        startedMicros: 2000,
        finishedMicros: 500_000,
        reportedMicros: 501_000,
      }),
      seenMicros: 502_000,
    },
    {
      run: run("b", {
        createdMicros: 0,
        scheduledMicros: 1000,
        startedMicros: 2000,
        finishedMicros: 500_000,
        reportedMicros: 501_000,
      }),
      seenMicros: 503_000,
    },
    {
      run: run(
        "c",
        {
          createdMicros: 0,
          scheduledMicros: 500_500,
          startedMicros: 501_000,
          finishedMicros: 999_000,
          reportedMicros: 999_500,
        },
        "Failed",
      ),
      seenMicros: 1_000_000,
    },
  ];
  const b = breakdown(samples, 2);
  test("percentiles per stage in ms", () => {
    expect(b.stages.schedule).toMatchObject({ n: 3, p50: 1, max: 500.5 });
    expect(b.stages.complete.p50).toBe(503);
    expect(b.stages.complete.max).toBe(1000);
  });
  test("throughput over first create → last seen, concurrency, backlog, failures", () => {
    expect(b.wallSeconds).toBe(1);
    expect(b.throughput).toBe(3);
    expect(b.maxConcurrent).toBe(2);
    expect(b.maxPending).toBe(3);
    expect(b.pendingAtCapacity).toBe(1);
    expect(breakdown(samples, 3).pendingAtCapacity).toBe(0);
    expect(b.succeeded).toBe(2);
    expect(b.failed).toBe(1);
  });
});
