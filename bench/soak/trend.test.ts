import { describe, expect, test } from "bun:test";
import { noGrowth, trend } from "./trend.ts";

describe("soak trend", () => {
  test("a flat saw-tooth has no growth; a steady climb under the same noise does", () => {
    const flat = Array.from({ length: 120 }, (_, i) => ({ t: i * 15, v: 100 + (i % 6) * 5 }));
    const leak = flat.map((s) => ({ t: s.t, v: s.v + s.t * 0.02 })); // +36 units over 30 min
    const f = trend(flat);
    const l = trend(leak);
    expect(Math.abs(f.growthOverWindow)).toBeLessThan(2);
    expect(noGrowth(f, 0.1, 5)).toBe(true);
    expect(l.slopePerHour - f.slopePerHour).toBeCloseTo(72, 6);
    expect(noGrowth(l, 0.1, 5)).toBe(false);
  });

  test("fewer than two samples: no trend", () => {
    expect(trend([{ t: 0, v: 7 }])).toEqual({
      slopePerHour: 0,
      mean: 7,
      growthOverWindow: 0,
      windowSeconds: 0,
    });
  });
});
