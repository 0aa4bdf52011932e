import { expect, test } from "bun:test";
import { breakdown, timeline } from "./timing.ts";

test("breakdown: the spans whose two ends are known", () => {
  expect(
    breakdown({
      createdMicros: 100,
      scheduledMicros: 1100,
      startedMicros: 1600,
      finishedMicros: 9600,
      reportedMicros: 9900,
    }),
  ).toEqual([
    { stage: "schedule", micros: 1000 },
    { stage: "dispatch", micros: 500 },
    { stage: "execution", micros: 8000 },
    { stage: "report", micros: 300 },
  ]);
  expect(breakdown({ scheduledMicros: 10, startedMicros: 15 })).toEqual([{ stage: "dispatch", micros: 5 }]);
  expect(breakdown(undefined)).toEqual([]);
});

test("timeline: known stamps in lifecycle order, ready between started and finished", () => {
  expect(timeline({ createdMicros: 1, startedMicros: 3 }, 4).map((s) => s.label)).toEqual([
    "created",
    "started",
    "ready",
  ]);
});
