import { describe, expect, test } from "bun:test";
import { RunMode } from "./reasons.ts";
import { runModeOf, runRequests } from "./run.ts";
import { runtimeCapacity } from "./runtime.ts";

describe("API defaults", () => {
  test("runModeOf names the one mode that is set", () => {
    expect(runModeOf({ mode: { task: {} } })).toBe(RunMode.Task);
    expect(runModeOf({ mode: { function: {} } })).toBe(RunMode.Function);
    expect(runModeOf({ mode: { session: {} } })).toBe(RunMode.Session);
  });

  test("a Run requests one runs slot unless it says otherwise", () => {
    expect(runRequests({})).toEqual({ runs: 1 });
    expect(runRequests({ resources: { requests: { licenses: 2 } } })).toEqual({ runs: 1, licenses: 2 });
    expect(runRequests({ resources: { requests: { runs: 4 } } })).toEqual({ runs: 4 });
  });

  test("a Runtime pod offers 8 runs slots unless it says otherwise", () => {
    expect(runtimeCapacity({})).toEqual({ runs: 8 });
    expect(runtimeCapacity({ capacity: { runs: 64, gpu: 1 } })).toEqual({ runs: 64, gpu: 1 });
  });
});
