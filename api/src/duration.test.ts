import { describe, expect, test } from "bun:test";
import { durationOr, isDuration, parseApiDuration, parseDuration } from "./duration.ts";

describe("parseDuration", () => {
  const cases: [string, number][] = [
    ["0", 0],
    ["250ms", 250],
    ["15s", 15_000],
    ["1m30s", 90_000],
    ["1.5h", 5_400_000],
    ["500us", 0.5],
  ];
  for (const [text, ms] of cases) test(text, () => expect(parseDuration(text)).toBe(ms));

  for (const bad of ["", "15", "s", "1x", "1s 2s", "-1s"]) {
    test(`rejects "${bad}"`, () => expect(() => parseDuration(bad)).toThrow());
  }

  test("durationOr falls back on invalid or missing input", () => {
    expect(durationOr(undefined, 7)).toBe(7);
    expect(durationOr("nope", 7)).toBe(7);
    expect(durationOr("2s", 7)).toBe(2000);
  });

  test("isDuration and parseApiDuration take only the CRD's shape", () => {
    for (const ok of ["30s", "1m30s", "1.5h", "250ms", "500us"]) expect(isDuration(ok)).toBe(true);
    for (const bad of ["0", "", "15", "1µs", " 1s", "1s ", "-1s", "5 minutes"]) {
      expect(isDuration(bad)).toBe(false);
      expect(parseApiDuration(bad)).toBeUndefined();
    }
    expect(parseApiDuration("1m30s")).toBe(90_000);
  });
});
