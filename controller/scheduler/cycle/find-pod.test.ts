import { describe, expect, test } from "bun:test";
import { Reason } from "@kruntimes/api";
import { CycleState } from "../framework/cycle-state.ts";
import { Code } from "../framework/status.ts";
import type { PodView, RunRequest, Unavailability } from "../framework/types.ts";
import { builtinRegistry, DEFAULT_PROFILE } from "../plugins/index.ts";
import { findPod, isPlacement } from "./find-pod.ts";

const fw = builtinRegistry().build(DEFAULT_PROFILE);
const runtime = { key: "ns/rt", capacity: { runs: 4 } };
const run: RunRequest = {
  key: "ns/r",
  runtimeKey: "ns/rt",
  namespace: "ns",
  labels: {},
  priority: 0,
  names: ["runs"],
  amounts: [1],
};

function pod(name: string, used: number, why?: Unavailability): PodView {
  return {
    key: `ns/${name}`,
    name,
    uid: name,
    node: "n",
    capacity: { runs: 4 },
    used: { runs: used },
    unavailability: () => why,
  };
}

function place(pods: PodView[], r: RunRequest = run) {
  return findPod(fw, new CycleState(), r, runtime, pods, 0);
}

describe("findPod", () => {
  test("picks the least-loaded pod", () => {
    const out = place([pod("a", 3), pod("b", 1), pod("c", 2)]);
    expect(isPlacement(out) && out.pod.name).toBe("b");
  });

  test("ties go to the smallest pod name, whatever the order", () => {
    for (const order of [
      ["c", "a", "b"],
      ["b", "c", "a"],
    ]) {
      const out = place(order.map((n) => pod(n, 1)));
      expect(isPlacement(out) && out.pod.name).toBe("a");
    }
  });

  test("skips unavailable pods", () => {
    const out = place([pod("a", 0, "HeartbeatStale"), pod("b", 3)]);
    expect(isPlacement(out) && out.pod.name).toBe("b");
  });

  const rejections: [string, PodView[], RunRequest, string, string][] = [
    ["no pods", [], run, Reason.NoReadyPods, "Runtime has no pods"],
    [
      "all full",
      [pod("a", 4), pod("b", 4)],
      run,
      Reason.InsufficientCapacity,
      "0/2 pods can take the Run: 2 insufficient runs",
    ],
    [
      "full beats unavailable",
      [pod("a", 4), pod("b", 0, "NotReady")],
      run,
      Reason.InsufficientCapacity,
      "0/2 pods can take the Run: 1 insufficient runs, 1 pod not Ready",
    ],
    [
      "all unavailable",
      [pod("a", 0, "NoHeartbeat")],
      run,
      Reason.NoReadyPods,
      "0/1 pods can take the Run: 1 no runtimed heartbeat",
    ],
    [
      "request larger than any pod",
      [pod("a", 0)],
      { ...run, amounts: [5] },
      Reason.Unschedulable,
      "requests 5 runs; each pod of the Runtime offers 4",
    ],
  ];
  for (const [name, pods, r, reason, message] of rejections) {
    test(`rejects: ${name}`, () => {
      const out = place(pods, r);
      expect(isPlacement(out)).toBe(false);
      if (!isPlacement(out)) {
        expect(out.status.reason).toBe(reason as typeof out.status.reason);
        expect(out.status.message).toBe(message);
      }
    });
  }

  test("a missing Runtime is RuntimeNotFound", () => {
    const out = findPod(fw, new CycleState(), run, undefined, [pod("a", 0)], 0);
    expect(!isPlacement(out) && out.status.reason).toBe(Reason.RuntimeNotFound);
    expect(!isPlacement(out) && out.status.code).toBe(Code.Unschedulable);
  });
});

describe("findPod extension points", () => {
  const scored = (name: string, raw: Record<string, number>, seen: number[][]) => ({
    name,
    preScore: () => true,
    score: (_s: CycleState, _r: RunRequest, p: PodView) => raw[p.name] ?? 0,
    normalizeScore: (_s: CycleState, _r: RunRequest, scores: number[]) => {
      seen.push([...scores]);
      const max = Math.max(...scores);
      for (let i = 0; i < scores.length; i++) scores[i] = max > 0 ? ((scores[i] as number) * 100) / max : 0;
    },
  });

  test("a normalising Score plugin sees the raw scores of every feasible pod, then weighs in", () => {
    const seen: number[][] = [];
    const plugin = scored("pref", { a: 1, b: 4, c: 2 }, seen);
    const custom = {
      preFilter: [],
      filter: fw.filter,
      score: [...fw.score, { plugin, weight: 3 }],
      reserve: [],
    };
    const out = findPod(
      custom,
      new CycleState(),
      run,
      runtime,
      [pod("a", 0), pod("b", 3), pod("c", 0), pod("d", 4)],
      0,
    );
    // d is full (not feasible); b is preferred enough to win despite its load.
    expect(seen).toEqual([[1, 4, 2]]);
    expect(isPlacement(out) && out.pod.name).toBe("b");
  });

  test("a plugin whose PreScore opts out is not scored", () => {
    const seen: number[][] = [];
    const plugin = { ...scored("pref", { b: 100 }, seen), preScore: () => false };
    const custom = {
      preFilter: [],
      filter: fw.filter,
      score: [...fw.score, { plugin, weight: 10 }],
      reserve: [],
    };
    const out = findPod(custom, new CycleState(), run, runtime, [pod("a", 0), pod("b", 3)], 0);
    expect(seen).toEqual([]);
    expect(isPlacement(out) && out.pod.name).toBe("a");
  });

  test("a PreFilter's narrowing rules pods out without filtering them, and counts them", () => {
    const filtered: string[] = [];
    const status = {
      code: Code.Unschedulable,
      reason: Reason.Unschedulable,
      message: "not in the set",
      plugin: "n",
    };
    const custom = {
      preFilter: [
        {
          name: "n",
          preFilter: (s: CycleState) => {
            s.narrow(new Set(["ns/b@b"]), status);
            return undefined;
          },
        },
      ],
      filter: [
        {
          name: "spy",
          filter: (_s: CycleState, _r: RunRequest, p: PodView) => {
            filtered.push(p.name);
            return undefined;
          },
        },
        ...fw.filter,
      ],
      score: fw.score,
      reserve: [],
    };
    const ok = findPod(custom, new CycleState(), run, runtime, [pod("a", 0), pod("b", 3), pod("c", 0)], 0);
    expect(isPlacement(ok) && ok.pod.name).toBe("b");
    expect(filtered).toEqual(["b"]);
    const full = findPod(custom, new CycleState(), run, runtime, [pod("a", 0), pod("b", 4), pod("c", 0)], 0);
    expect(!isPlacement(full) && full.status.message).toBe(
      "0/3 pods can take the Run: 1 insufficient runs, 2 not in the set",
    );
  });
});
