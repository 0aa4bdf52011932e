import { describe, expect, test } from "bun:test";
import { Reason, type RunStatus } from "@kruntimes/api";
import { type Heartbeat, observeLease } from "../scheduler/cache/heartbeat.ts";
import { PodInfo, PodUsage } from "../scheduler/cache/pod-info.ts";
import { aLease, aPod, aRun, boundTo } from "../testing/fixtures.ts";
import { assess } from "./assess.ts";

const NOW = 1_700_000_000_000;
const OPTS = { staleAfterMs: 15_000, startTimeoutMs: 30_000 };

function pod(o: { uid?: string; terminating?: boolean } = {}): PodInfo {
  const p = aPod({ name: "p1", uid: o.uid, terminating: o.terminating });
  return new PodInfo(p, new PodUsage("ns/p1", p.metadata.uid ?? ""));
}
/** A renewal this process saw `ageMs` ago. */
function hb(ageMs: number, holder = "uid-p1"): Heartbeat {
  return observeLease(aLease("p1", holder, NOW - ageMs), undefined, NOW - ageMs);
}
function status(phase: RunStatus["phase"], scheduledAgoMs?: number): RunStatus {
  const s = boundTo("p1", 1, phase);
  if (scheduledAgoMs !== undefined) s.timing = { scheduledMicros: (NOW - scheduledAgoMs) * 1000 };
  return s;
}

describe("assess", () => {
  const cases: [string, RunStatus, PodInfo | undefined, Heartbeat | undefined, string | undefined][] = [
    ["healthy Running", status("Running"), pod(), hb(1000), undefined],
    ["pod gone", status("Running"), undefined, hb(1000), Reason.PodGone],
    ["pod replaced", status("Running"), pod({ uid: "other" }), hb(1000, "other"), Reason.PodGone],
    ["pod terminating", status("Running"), pod({ terminating: true }), hb(1000), Reason.PodTerminating],
    ["no heartbeat Lease", status("Running"), pod(), undefined, Reason.PodUnhealthy],
    ["heartbeat by another UID", status("Running"), pod(), hb(1000, "x"), Reason.PodUnhealthy],
    ["heartbeat 14s old is still fine", status("Running"), pod(), hb(14_000), undefined],
    ["heartbeat 15s old is stale", status("Running"), pod(), hb(15_000), Reason.PodUnhealthy],
    ["Scheduled 29s ago waits", status("Scheduled", 29_000), pod(), hb(1000), undefined],
    ["Scheduled 30s ago, never started", status("Scheduled", 30_000), pod(), hb(1000), Reason.PodUnhealthy],
  ];
  for (const [name, s, p, h, reason] of cases) {
    test(name, () => {
      const v = assess(aRun({ name: "r", status: s }), p, h, NOW, OPTS);
      expect(v.kind === "stale" ? v.reason : undefined).toBe(reason as typeof Reason.PodGone | undefined);
    });
  }

  test("first sight of a Lease renewed long ago (a controller started after an apiserver outage): lost only after a stale period of its own watching", () => {
    const run = aRun({ name: "r", status: status("Running") });
    const seen = observeLease(aLease("p1", "uid-p1", NOW - 60_000), undefined, NOW);
    expect(assess(run, pod(), seen, NOW + 14_000, OPTS).kind).toBe("ok");
    const v = assess(run, pod(), seen, NOW + 15_000, OPTS);
    expect(v.kind === "stale" ? v.reason : undefined).toBe(Reason.PodUnhealthy);
  });

  test("a Scheduled Run is rechecked exactly at its start deadline", () => {
    const v = assess(aRun({ name: "r", status: status("Scheduled", 10_000) }), pod(), hb(1000), NOW, OPTS);
    expect(v).toEqual({ kind: "ok", recheckInMs: 20_000 });
  });
});
