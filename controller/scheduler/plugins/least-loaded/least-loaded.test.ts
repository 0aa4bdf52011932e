import { describe, expect, test } from "bun:test";
import { CycleState } from "../../framework/cycle-state.ts";
import type { PodView, RunRequest } from "../../framework/types.ts";
import { LeastLoaded, New } from "./least-loaded.ts";

function req(r: Record<string, number>): RunRequest {
  const names = Object.keys(r).sort();
  return {
    key: "ns/r",
    runtimeKey: "ns/rt",
    namespace: "ns",
    labels: {},
    priority: 0,
    names,
    amounts: names.map((n) => r[n] as number),
  };
}
function pod(capacity: Record<string, number>, used: Record<string, number>): PodView {
  return { key: "ns/p", name: "p", uid: "u", node: "n", capacity, used, unavailability: () => undefined };
}

describe("least-loaded", () => {
  const plugin = new LeastLoaded();
  const cases: [string, Record<string, number>, Record<string, number>, Record<string, number>, number][] = [
    ["empty pod", { runs: 1 }, { runs: 10 }, {}, 90],
    ["half full", { runs: 1 }, { runs: 10 }, { runs: 5 }, 40],
    ["last slot", { runs: 1 }, { runs: 10 }, { runs: 9 }, 0],
    ["two resources averaged", { runs: 1, gpu: 1 }, { runs: 10, gpu: 2 }, { runs: 0, gpu: 0 }, 70],
    ["resource without capacity is ignored", { runs: 1, lic: 0 }, { runs: 4 }, {}, 75],
  ];
  for (const [name, request, capacity, used, want] of cases) {
    test(name, () => expect(plugin.score(new CycleState(), req(request), pod(capacity, used))).toBe(want));
  }

  test("weights shift the average", () => {
    const weighted = New({ weights: { gpu: 3 } });
    // runs: 9/10 free → 0.9, gpu: 1/2 free → 0.5; (0.9 + 3 * 0.5) / 4 = 0.6
    expect(weighted.score(new CycleState(), req({ runs: 1, gpu: 1 }), pod({ runs: 10, gpu: 2 }, {}))).toBe(
      60,
    );
  });

  test("New validates weights", () => {
    expect(() => New({ weights: { runs: 0 } })).toThrow();
    expect(() => New({ weights: { runs: "x" } })).toThrow();
  });
});
