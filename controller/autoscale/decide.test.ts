import { describe, expect, test } from "bun:test";
import {
  decide,
  type PoolLoad,
  pruneHistory,
  type Recommendation,
  type ScalePolicy,
  wantedReplicas,
} from "./decide.ts";

const policy: ScalePolicy = {
  minReplicas: 1,
  maxReplicas: 10,
  targetUtilization: 0.7,
  scaleUpWindowMs: 0,
  scaleDownDelayMs: 60_000,
};
const load = (used: number, pending = 0, extra: Partial<PoolLoad> = {}): PoolLoad => ({
  perPod: { runs: 8 },
  used: { runs: used },
  pending: { runs: pending },
  pendingRuns: pending,
  ...extra,
});

describe("wantedReplicas", () => {
  const cases: [string, PoolLoad, Partial<ScalePolicy>, number][] = [
    ["idle pool keeps the minimum", load(0), {}, 1],
    ["idle pool with min 0 goes to zero", load(0), { minReplicas: 0 }, 0],
    ["one pending Run wakes a pool at zero", load(0, 1), { minReplicas: 0 }, 1],
    ["exactly the target fills one pod (5.6 = 0.7 × 8)", load(5.6), {}, 1],
    ["just above the target needs a second pod", load(6), {}, 2],
    ["pending Runs count as in use", load(8, 12), {}, 4],
    ["capped at the maximum", load(8, 500), {}, 10],
    ["target 1 packs pods full", load(16), { targetUtilization: 1 }, 2],
    [
      "the most demanding resource decides",
      {
        perPod: { runs: 8, gpu: 1 },
        used: { runs: 2, gpu: 1 },
        pending: { runs: 2, gpu: 2 },
        pendingRuns: 2,
      },
      { targetUtilization: 1 },
      3,
    ],
  ];
  for (const [name, l, p, want] of cases)
    test(name, () => expect(wantedReplicas(l, { ...policy, ...p })).toBe(want));
});

describe("decide", () => {
  const NOW = 1_000_000;
  const hist = (...pairs: [number, number][]): Recommendation[] =>
    pairs.map(([ago, replicas]) => ({ atMs: NOW - ago, replicas }));

  test("a backlog scales up at once with a 0s up window", () => {
    const d = decide(1, hist([10_000, 1], [0, 4]), load(8, 12), policy, NOW);
    expect(d).toMatchObject({ desired: 4, reason: "ScaleUp" });
    expect(d.message).toContain("1 → 4 pods");
  });

  test("from zero says so", () => {
    const d = decide(0, hist([0, 1]), load(0, 1), { ...policy, minReplicas: 0 }, NOW);
    expect(d).toMatchObject({ desired: 1, reason: "ScaleUpFromZero" });
  });

  test("an up window scales to the lowest count wanted in it", () => {
    const p = { ...policy, scaleUpWindowMs: 5_000 };
    expect(decide(1, hist([3_000, 2], [0, 4]), load(8, 12), p, NOW)).toMatchObject({ desired: 2 });
    // The 1 recommended 10 s ago was still in effect when the window opened.
    expect(decide(1, hist([10_000, 1], [0, 4]), load(8, 12), p, NOW)).toMatchObject({
      desired: 1,
      reason: "Steady",
    });
  });

  test("scale down waits for the delay, then goes to the highest count wanted in it", () => {
    const early = decide(4, hist([30_000, 4], [20_000, 1]), load(0), policy, NOW);
    expect(early).toMatchObject({ desired: 4, reason: "Steady" });
    // The 4 stayed in effect until the 1 was recommended 20 s ago: due 40 s from now.
    expect(early.recheckAtMs).toBe(NOW + 40_000);
    const due = decide(4, hist([90_000, 4], [70_000, 2], [30_000, 1]), load(0), policy, NOW);
    expect(due).toMatchObject({ desired: 2, reason: "ScaleDown" });
    const later = decide(2, hist([70_000, 2], [30_000, 1]), load(0), policy, NOW + 40_000);
    expect(later).toMatchObject({ desired: 1, reason: "ScaleDown" });
  });

  test("steady when the load fits", () => {
    expect(decide(2, hist([0, 2]), load(8), policy, NOW)).toMatchObject({ desired: 2, reason: "Steady" });
  });

  test("pruning keeps the recommendation in effect at the window start and drops repeats", () => {
    const h = hist([200_000, 3], [100_000, 2], [50_000, 2], [10_000, 1]);
    expect(pruneHistory(h, policy, NOW)).toEqual(hist([100_000, 2], [10_000, 1]));
  });
});
