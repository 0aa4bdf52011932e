import { describe, expect, test } from "bun:test";
import type { RunSummary } from "../../shared/types.ts";
import {
  DEFAULT_FILTER,
  durationMicros,
  filterQuery,
  filterRuns,
  parseFilter,
  phaseCounts,
  serverSelectors,
  sortRuns,
} from "./run-filter.ts";

const run = (name: string, o: Partial<RunSummary> = {}): RunSummary => ({
  name,
  namespace: "ns",
  uid: name,
  labels: {},
  mode: "task",
  runtime: "bash",
  phase: "Succeeded",
  attempt: 1,
  created: "2026-12-03T10:00:00Z",
  runsRequest: 1,
  ...o,
});

describe("run filters", () => {
  const runs = [
    run("a", { phase: "Running" }),
    run("b", { phase: "Failed", reason: "NonZeroExit", mode: "function" }),
    run("c", { runtime: "python", pod: "python-abc" }),
  ];

  test("phase, mode and text (name, runtime, reason, pod)", () => {
    expect(filterRuns(runs, { ...DEFAULT_FILTER, phases: ["Running", "Failed"] }).map((r) => r.name)).toEqual(
      ["a", "b"],
    );
    expect(filterRuns(runs, { ...DEFAULT_FILTER, modes: ["function"] }).map((r) => r.name)).toEqual(["b"]);
    expect(filterRuns(runs, { ...DEFAULT_FILTER, text: "nonzero" }).map((r) => r.name)).toEqual(["b"]);
    expect(filterRuns(runs, { ...DEFAULT_FILTER, text: "PYTHON-a" }).map((r) => r.name)).toEqual(["c"]);
  });

  test("counts per phase", () => {
    expect([...phaseCounts(runs)]).toEqual([
      ["Running", 1],
      ["Failed", 1],
      ["Succeeded", 1],
    ]);
  });

  test("the URL query round-trips; unknown values are dropped", () => {
    const f = {
      ...DEFAULT_FILTER,
      phases: ["Failed" as const],
      text: "x",
      runtime: "bash",
      sort: "name" as const,
      desc: true,
    };
    const q = Object.fromEntries(new URLSearchParams(filterQuery(f).slice(1)));
    expect(parseFilter(q)).toEqual(f);
    expect(parseFilter({ phase: "Nope,Running", sort: "bogus", mode: "x" })).toEqual({
      ...DEFAULT_FILTER,
      phases: ["Running"],
    });
    expect(filterQuery(DEFAULT_FILTER)).toBe("");
  });

  test("runtime is a field selector, labels a label selector", () => {
    expect(serverSelectors({ runtime: "bash", labels: "team=a" })).toBe(
      "?fieldSelector=spec.runtime%3Dbash&labelSelector=team%3Da",
    );
    expect(serverSelectors({ runtime: "", labels: "" })).toBe("");
  });
});

describe("sorting and durations", () => {
  const now = Date.parse("2026-12-03T10:00:10Z");
  const runs = [
    run("old", { created: "2026-12-03T09:00:00Z", createdMicros: 1, finishedMicros: 3_000_001 }),
    run("new", { created: "2026-12-03T10:00:05Z", phase: "Running" }),
    run("mid", { created: "2026-12-03T09:30:00Z", phase: "Pending", attempt: 0 }),
  ];

  test("age: youngest first; desc flips", () => {
    expect(sortRuns(runs, "age", false, now).map((r) => r.name)).toEqual(["new", "mid", "old"]);
    expect(sortRuns(runs, "age", true, now).map((r) => r.name)).toEqual(["old", "mid", "new"]);
  });

  test("phase follows the lifecycle; name breaks ties", () => {
    expect(sortRuns(runs, "phase", false, now).map((r) => r.name)).toEqual(["mid", "new", "old"]);
    expect(sortRuns(runs, "attempt", false, now).map((r) => r.name)).toEqual(["mid", "new", "old"]);
  });

  test("duration: finished − created, or running time so far, or unknown", () => {
    expect(durationMicros(runs[0] as RunSummary, now)).toBe(3_000_000);
    expect(durationMicros(runs[1] as RunSummary, now)).toBe(5_000_000);
    expect(durationMicros(run("x", { phase: "Failed" }), now)).toBeUndefined();
  });
});
