import { describe, expect, test } from "bun:test";
import { Reason } from "@kruntimes/api";
import { CycleState } from "../../framework/cycle-state.ts";
import { Code } from "../../framework/status.ts";
import type { PodView, RunRequest } from "../../framework/types.ts";
import { ResourcesFit } from "./resources-fit.ts";

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

describe("resources-fit preFilter", () => {
  const plugin = new ResourcesFit();
  const cases: [string, Record<string, number>, Record<string, number>, string | undefined][] = [
    ["fits the Runtime", { runs: 1 }, { runs: 8 }, undefined],
    [
      "more runs than a pod has",
      { runs: 9 },
      { runs: 8 },
      "requests 9 runs; each pod of the Runtime offers 8",
    ],
    [
      "a resource the Runtime does not offer",
      { runs: 1, gpu: 1 },
      { runs: 8 },
      "requests 1 gpu; Runtime offers no gpu",
    ],
    ["zero of an unoffered resource", { runs: 1, gpu: 0 }, { runs: 8 }, undefined],
  ];
  for (const [name, request, capacity, message] of cases) {
    test(name, () => {
      const v = plugin.preFilter(new CycleState(), req(request), { key: "ns/rt", capacity });
      expect(v?.message).toBe(message);
      if (v) {
        expect(v.code).toBe(Code.UnschedulableAndUnresolvable);
        expect(v.reason).toBe(Reason.Unschedulable);
      }
    });
  }
});

describe("resources-fit filter", () => {
  const plugin = new ResourcesFit();
  const cases: [string, Record<string, number>, Record<string, number>, Record<string, number>, boolean][] = [
    ["free slot", { runs: 1 }, { runs: 2 }, { runs: 1 }, true],
    ["exactly full", { runs: 1 }, { runs: 2 }, { runs: 2 }, false],
    ["multi-slot request fits exactly", { runs: 3 }, { runs: 4 }, { runs: 1 }, true],
    ["second resource short", { runs: 1, gpu: 2 }, { runs: 4, gpu: 2 }, { runs: 0, gpu: 1 }, false],
    ["over-committed pod after a capacity decrease", { runs: 1 }, { runs: 2 }, { runs: 3 }, false],
  ];
  for (const [name, request, capacity, used, fits] of cases) {
    test(name, () => {
      const v = plugin.filter(new CycleState(), req(request), pod(capacity, used));
      expect(v === undefined).toBe(fits);
      if (v) expect(v.reason).toBe(Reason.InsufficientCapacity);
    });
  }

  test("the same status object is returned for the same resource (no per-pod allocation)", () => {
    const a = plugin.filter(new CycleState(), req({ runs: 1 }), pod({ runs: 1 }, { runs: 1 }));
    const b = plugin.filter(new CycleState(), req({ runs: 1 }), pod({ runs: 2 }, { runs: 2 }));
    expect(a).toBe(b as NonNullable<typeof b>);
  });
});

describe("resources-fit session exclusivity", () => {
  const plugin = new ResourcesFit();
  const session = { ...req({ runs: 1 }), exclusive: true };
  const cases: [string, RunRequest, Partial<PodView>, boolean][] = [
    ["a session fits an empty pod", session, {}, true],
    ["a session does not fit a pod another Run holds", session, { occupied: true, used: { runs: 1 } }, false],
    ["nothing fits a pod a session holds", req({ runs: 1 }), { sealed: true, occupied: true }, false],
    ["nothing fits a spent pod (its session ended)", req({ runs: 1 }), { sealed: true }, false],
    ["a session does not fit a spent pod", session, { sealed: true }, false],
    ["a task fits beside another task", req({ runs: 1 }), { occupied: true, used: { runs: 1 } }, true],
  ];
  for (const [name, run, extra, fits] of cases) {
    test(name, () => {
      const v = plugin.filter(new CycleState(), run, { ...pod({ runs: 8 }, {}), ...extra });
      expect(v === undefined).toBe(fits);
    });
  }
});
