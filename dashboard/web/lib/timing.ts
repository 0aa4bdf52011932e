/**
 * The latency breakdown of a Run's current attempt from `status.timing` (microseconds): the same
 * spans `krt describe` prints — schedule (created → scheduled), dispatch (scheduled → started),
 * execution (started → finished), report (finished → reported).
 */
import type { RunTiming } from "@kruntimes/api/src/run-status.ts";

export interface Stage {
  stage: "schedule" | "dispatch" | "execution" | "report";
  micros: number;
}

const SPANS: [Stage["stage"], keyof RunTiming, keyof RunTiming][] = [
  ["schedule", "createdMicros", "scheduledMicros"],
  ["dispatch", "scheduledMicros", "startedMicros"],
  ["execution", "startedMicros", "finishedMicros"],
  ["report", "finishedMicros", "reportedMicros"],
];

export function breakdown(t: RunTiming | undefined): Stage[] {
  if (!t) return [];
  const out: Stage[] = [];
  for (const [stage, from, to] of SPANS) {
    const a = t[from];
    const b = t[to];
    if (a !== undefined && b !== undefined) out.push({ stage, micros: Math.max(0, b - a) });
  }
  return out;
}

/** The timestamps that exist, in lifecycle order, for the phase timeline. */
export function timeline(
  t: RunTiming | undefined,
  readyMicros?: number,
): { label: string; micros: number }[] {
  const stamps: [string, number | undefined][] = [
    ["created", t?.createdMicros],
    ["scheduled", t?.scheduledMicros],
    ["started", t?.startedMicros],
    ["ready", readyMicros],
    ["finished", t?.finishedMicros],
    ["reported", t?.reportedMicros],
  ];
  return stamps
    .filter((s): s is [string, number] => s[1] !== undefined)
    .map(([label, micros]) => ({ label, micros }));
}
