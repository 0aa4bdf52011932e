import { describe, expect, test } from "bun:test";
import { observeLease } from "../scheduler/cache/heartbeat.ts";
import { PodInfo, PodUsage } from "../scheduler/cache/pod-info.ts";
import { aLease, aPod, aRuntime } from "../testing/fixtures.ts";
import { runtimeStatus, sameStatus } from "./runtime-status.ts";

const NOW = 1_700_000_000_000;

function pod(
  name: string,
  o: { ready?: boolean; hash?: string; terminating?: boolean; beat?: boolean } = {},
) {
  const p = aPod({ name, ready: o.ready, terminating: o.terminating });
  if (p.metadata.annotations) p.metadata.annotations["kruntimes.io/template-hash"] = o.hash ?? "h1";
  const info = new PodInfo(p, new PodUsage(`ns/${name}`, p.metadata.uid ?? ""));
  if (o.beat !== false) info.heartbeat = observeLease(aLease(name, `uid-${name}`, NOW), undefined, NOW);
  return info;
}

function status(
  replicas: number,
  pods: PodInfo[],
  extra: { deploymentExists?: boolean; hash?: string; pendingRuns?: number } = {},
) {
  const rt = aRuntime("rt");
  rt.spec.replicas = replicas;
  return runtimeStatus(rt, {
    pods,
    templateHash: extra.hash ?? "h1",
    deploymentExists: extra.deploymentExists ?? true,
    ...(extra.pendingRuns !== undefined ? { pendingRuns: extra.pendingRuns } : {}),
    nowMs: NOW,
  });
}

const cond = (s: ReturnType<typeof status>, type: string) => s.conditions?.find((c) => c.type === type);

describe("runtimeStatus", () => {
  test("all pods ready and heartbeating: Ready, not Progressing", () => {
    const s = status(2, [pod("a"), pod("b")]);
    expect([s.replicas, s.readyReplicas, s.availableReplicas]).toEqual([2, 2, 2]);
    expect(cond(s, "Ready")).toMatchObject({ status: "True", reason: "PodsReady" });
    expect(cond(s, "Progressing")).toMatchObject({ status: "False", reason: "Complete" });
  });

  test("pendingRuns is the scheduler's count when given (0 included), absent otherwise; a change is a new status", () => {
    expect(status(1, [pod("a")], { pendingRuns: 0 }).pendingRuns).toBe(0);
    expect(status(1, [pod("a")])).not.toHaveProperty("pendingRuns");
    const before = status(1, [pod("a")], { pendingRuns: 3 });
    expect(sameStatus(before, status(1, [pod("a")], { pendingRuns: 3 }))).toBe(true);
    expect(sameStatus(before, status(1, [pod("a")], { pendingRuns: 4 }))).toBe(false);
  });

  test("a ready pod without heartbeat is ready but not available", () => {
    const s = status(1, [pod("a", { beat: false })]);
    expect([s.readyReplicas, s.availableReplicas]).toEqual([1, 0]);
    expect(cond(s, "Ready")?.status).toBe("False");
  });

  test("partial readiness is not Ready and is Progressing", () => {
    const s = status(3, [pod("a"), pod("b", { ready: false })]);
    expect(cond(s, "Ready")).toMatchObject({
      status: "False",
      reason: "PodsNotReady",
      message: "1/3 pods ready, 1 accepting Runs",
    });
    expect(cond(s, "Progressing")).toMatchObject({ status: "True", reason: "ScalingUp" });
  });

  test("pods on an old template hash mean a rollout is in progress", () => {
    const s = status(2, [pod("a"), pod("b")], { hash: "h2" });
    expect(cond(s, "Progressing")).toMatchObject({ status: "True", reason: "RollingOut" });
  });

  test("terminating pods do not count", () => {
    const s = status(1, [pod("a"), pod("b", { terminating: true })]);
    expect(s.replicas).toBe(1);
  });

  test("no Deployment yet, and scaled to zero", () => {
    expect(cond(status(1, [], { deploymentExists: false }), "Progressing")?.reason).toBe("Creating");
    expect(cond(status(0, []), "Ready")).toMatchObject({ status: "False", reason: "ScaledToZero" });
  });

  test("sameStatus ignores key order and condition order", () => {
    const s = status(1, [pod("a")]);
    const reordered = JSON.parse(JSON.stringify({ ...s, conditions: [...(s.conditions ?? [])].reverse() }));
    expect(sameStatus(reordered, s)).toBe(true);
    expect(sameStatus({ ...s, readyReplicas: 0 }, s)).toBe(false);
  });
});
