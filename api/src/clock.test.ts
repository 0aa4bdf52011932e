import { describe, expect, test } from "bun:test";
import { nowMicros, wallClockMs } from "./clock.ts";

describe("wall clock with sub-millisecond precision", () => {
  test("stays within the millisecond Date.now() reports", () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const t = wallClockMs();
      const after = Date.now();
      expect(t).toBeGreaterThanOrEqual(before);
      expect(t).toBeLessThan(after + 1);
    }
  });
  test("follows the wall clock when the monotonic clock lags it (a suspended VM, a clock step)", () => {
    const realNow = Date.now;
    try {
      const skew = 22_000;
      Date.now = () => realNow() + skew;
      const before = realNow() + skew;
      const t = wallClockMs();
      expect(t).toBeGreaterThanOrEqual(before);
      expect(Math.abs(nowMicros() / 1000 - (realNow() + skew))).toBeLessThan(2);
    } finally {
      Date.now = realNow;
    }
    // And back: the anchor moves again.
    expect(Math.abs(wallClockMs() - Date.now())).toBeLessThan(2);
  });
});
