import { describe, expect, test } from "bun:test";
import { Reason } from "@kruntimes/api";
import { aLease, aPod, type PodFixture } from "../../../testing/fixtures.ts";
import { observeLease } from "../../cache/heartbeat.ts";
import { PodInfo, PodUsage } from "../../cache/pod-info.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import type { RunRequest } from "../../framework/types.ts";
import { New, PodAvailable } from "./pod-available.ts";

const NOW = 1_700_000_000_000;
const run: RunRequest = {
  key: "ns/r",
  runtimeKey: "ns/rt",
  namespace: "ns",
  labels: {},
  priority: 0,
  names: ["runs"],
  amounts: [1],
};

function pod(f: Partial<PodFixture>, lease?: { holder?: string; ageMs?: number } | null): PodInfo {
  const p = aPod({ name: "p1", ...f });
  const info = new PodInfo(p, new PodUsage("ns/p1", p.metadata.uid ?? ""));
  if (lease !== null) {
    const l = aLease("p1", lease?.holder ?? (p.metadata.uid as string), NOW - (lease?.ageMs ?? 1000));
    info.heartbeat = observeLease(l, undefined, NOW);
  }
  return info;
}

describe("pod-available", () => {
  const plugin = new PodAvailable();
  const cases: [string, PodInfo, string | undefined][] = [
    ["ready pod with a fresh heartbeat", pod({}), undefined],
    ["not Ready", pod({ ready: false }), "pod not Ready"],
    ["terminating", pod({ terminating: true }), "pod terminating"],
    [
      "draining for a scale-down",
      pod({ annotations: { "kruntimes.io/scale-down": "now" } }),
      "pod draining for a scale-down",
    ],
    ["no heartbeat Lease", pod({}, null), "no runtimed heartbeat"],
    ["stale heartbeat", pod({}, { ageMs: 10_001 }), "runtimed heartbeat stale"],
    [
      "Lease held by another pod UID",
      pod({}, { holder: "someone-else" }),
      "heartbeat Lease held by another pod UID",
    ],
    ["no capacity annotation", pod({ capacity: null }), "pod has no valid kruntimes.io/capacity annotation"],
  ];
  for (const [name, info, message] of cases) {
    test(name, () => {
      const v = plugin.filter(new CycleState(), run, info, NOW);
      expect(v?.message).toBe(message);
      if (v) expect(v.reason).toBe(Reason.NoReadyPods);
    });
  }

  test("New rejects args", () => {
    expect(() => New({ x: 1 })).toThrow();
    expect(New(undefined).name).toBe("pod-available");
  });
});
