import { describe, expect, test } from "bun:test";
import { PodInfo, PodUsage } from "../scheduler/cache/pod-info.ts";
import { aPod, type PodFixture } from "../testing/fixtures.ts";
import { drainCandidates } from "./drain-candidates.ts";

const NOW = 1_700_000_000_000;

function pod(f: PodFixture & { runs?: number; sealed?: boolean; available?: boolean }): PodInfo {
  const p = aPod(f);
  const usage = new PodUsage(`ns/${f.name}`, p.metadata.uid ?? "");
  for (let i = 0; i < (f.runs ?? 0); i++) usage.add(`ns/${f.name}-run${i}`, ["runs"], [1]);
  if (f.sealed) usage.spent = true;
  const info = new PodInfo(p, usage);
  const available = f.available ?? true;
  info.isAvailable = () => available;
  return info;
}

describe("drainCandidates", () => {
  const none = { boundWorkspaces: () => 0, resting: () => false };

  test("the emptiest pods first, pods not serving yet before them", () => {
    const pods = [
      pod({ name: "a", runs: 3 }),
      pod({ name: "b", runs: 0 }),
      pod({ name: "c", runs: 1 }),
      pod({ name: "d", available: false }),
    ];
    expect(drainCandidates(pods, 3, none, NOW).map((p) => p.name)).toEqual(["d", "b", "c"]);
  });

  test("never a pod with a bound workspace, a session's pod, a draining, terminating or resting one", () => {
    const pods = [
      pod({ name: "ws" }),
      pod({ name: "session", sealed: true }),
      pod({ name: "draining", annotations: { "kruntimes.io/scale-down": "x" } }),
      pod({ name: "gone", terminating: true }),
      pod({ name: "rest" }),
      pod({ name: "ok", runs: 5 }),
    ];
    const facts = {
      boundWorkspaces: (k: string) => (k === "ns/ws" ? 1 : 0),
      resting: (p: PodInfo) => p.name === "rest",
    };
    expect(drainCandidates(pods, 6, facts, NOW).map((p) => p.name)).toEqual(["ok"]);
  });

  test("nothing to drain for zero", () => {
    expect(drainCandidates([pod({ name: "a" })], 0, none, NOW)).toEqual([]);
  });
});
