import { describe, expect, test } from "bun:test";
import type { BenchResult } from "./bench.ts";
import { comparisons, floorRows } from "./report.ts";
import {
  bindStatus,
  fencedReplace,
  finishStatus,
  floorLevels,
  floorRatio,
  type RunFloor,
  type RunWriteCeiling,
} from "./run-floor.ts";
import type { ScenarioResult } from "./run-scenario.ts";
import { SCENARIOS } from "./scenarios.ts";
import { summarize } from "./stats.ts";

const summary = (p50: number, p95: number) => ({ ...summarize([p50]), p50, p95 });

function floor(concurrency: number | "one", p50: number, p95: number): RunFloor {
  const s = summary(p50 / 3, p95 / 3);
  return {
    concurrency: concurrency === "one" ? 1 : concurrency,
    oneAtATime: concurrency === "one",
    runs: 30,
    rounds: 1,
    seconds: 1,
    create: s,
    bind: s,
    finish: s,
    complete: summary(p50, p95),
    refenced: 0,
  };
}

describe("Run-shaped floor", () => {
  test("levels: one chain at a time, plus each other arrival of the scenarios once, 3 rounds of 30..200 chains", () => {
    expect(floorLevels([])).toEqual([{ concurrency: 1, oneAtATime: true, runs: 90, rounds: 3 }]);
    const all = floorLevels(SCENARIOS);
    expect(all.map((l) => [l.concurrency, l.oneAtATime])).toEqual([
      [1, true],
      [25, false],
      [40, false],
      [64, false],
    ]);
    expect(all.map((l) => l.runs)).toEqual([90, 150, 240, 384]);
    expect(floorLevels([{ concurrency: 500 }]).at(-1)).toEqual({
      concurrency: 500,
      oneAtATime: false,
      runs: 600,
      rounds: 3,
    });
    // One create in flight (overlapping Runs) is not one at a time: a level of its own.
    expect(floorLevels([{ concurrency: 1 }]).map((l) => l.oneAtATime)).toEqual([true, false]);
  });

  test("ratio: a scenario against the floor of its own arrivals; none without that floor", () => {
    const floors = [floor("one", 30, 45), floor(25, 100, 200)];
    expect(floorRatio({ p50: 60, p95: 90 }, floors, { concurrency: 1, oneAtATime: true })).toEqual({
      p50: 2,
      p95: 2,
      floorConcurrency: 1,
      floorOneAtATime: true,
    });
    expect(floorRatio({ p50: 150, p95: 500 }, floors, { concurrency: 25 })).toEqual({
      p50: 1.5,
      p95: 2.5,
      floorConcurrency: 25,
      floorOneAtATime: false,
    });
    expect(floorRatio({ p50: 150, p95: 500 }, floors, { concurrency: 64 })).toBeUndefined();
    expect(floorRatio({ p50: 60, p95: 90 }, floors, { concurrency: 1 })).toBeUndefined();
    expect(
      floorRatio({ p50: 1, p95: 1 }, [floor("one", 0, 0)], { concurrency: 1, oneAtATime: true }),
    ).toBeUndefined();
  });

  // That the apiserver accepts them (the Run CRD's schema and rules) the krt bench e2e shows.
  test("the bind- and finish-shaped statuses have the hot path's shape", () => {
    const now = "2026-12-03T20:00:00Z";
    const bound = bindStatus(1, 100, 200, now);
    const done = finishStatus(bound, 300, now);
    expect(bound.phase).toBe("Scheduled");
    expect(bound.assignment).toBeUndefined(); // no controller may assess a pod that does not exist
    expect(done).toMatchObject({ phase: "Succeeded", exitCode: 0, attempt: 1 });
    expect(done.timing).toEqual({
      createdMicros: 100,
      scheduledMicros: 200,
      startedMicros: 300,
      finishedMicros: 300,
      reportedMicros: 300,
    });
    expect(done.conditions?.map((c) => c.type)).toEqual(["Scheduled", "Finished"]);
  });

  test("status patches are fenced as the writers fence theirs, then replace /status whole", () => {
    expect(fencedReplace(undefined, { phase: "Scheduled" })).toEqual([
      { op: "test", path: "/status", value: null },
      { op: "add", path: "/status", value: { phase: "Scheduled" } },
    ]);
    expect(fencedReplace({ phase: "Scheduled", attempt: 1 }, { phase: "Succeeded" }).slice(0, 2)).toEqual([
      { op: "test", path: "/status/phase", value: "Scheduled" },
      { op: "test", path: "/status/attempt", value: 1 },
    ]);
  });

  test("report: floor rows per write, ratios to the floor, burst as a share of the Run ceiling ÷ 3", () => {
    const floors = [floor("one", 30, 45), floor(64, 100, 200)];
    expect(floorRows(floors).map((r) => r.slice(0, 3))).toEqual([
      ["create", "one at a time", "30"],
      ["bind", "one at a time", "30"],
      ["finish", "one at a time", "30"],
      ["complete", "one at a time", "30"],
      ["create", "64", "30"],
      ["bind", "64", "30"],
      ["finish", "64", "30"],
      ["complete", "64", "30"],
    ]);
    const burst = {
      scenario: SCENARIOS.find((s) => s.name === "burst"),
      language: "bash",
      breakdown: { throughput: 50, stages: { complete: summary(300, 1000) } },
    } as unknown as ScenarioResult;
    const runCeiling: RunWriteCeiling = {
      objects: 500,
      writes: 1500,
      concurrency: 64,
      seconds: 5,
      writesPerSecond: 300,
      idealRunsPerSecond: 100,
    };
    const lines = comparisons({ scenarios: [burst], floors, runCeiling } as unknown as BenchResult);
    expect(lines).toContain("burst (bash): 50.0 Runs/s = 50% of the Run write ceiling ÷ 3");
    expect(lines).toContain(
      "burst (bash): complete p50 3.00×, p95 5.00× the Run-shaped floor at 64 in flight",
    );
  });
});
