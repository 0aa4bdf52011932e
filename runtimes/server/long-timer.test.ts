import { describe, expect, test } from "bun:test";
import { longTimeout } from "./long-timer.ts";

describe("longTimeout", () => {
  test("waits the whole time when it is longer than one timer may be", async () => {
    const t0 = performance.now();
    let at = 0;
    longTimeout(() => (at = performance.now() - t0), 50, 20);
    await Bun.sleep(90);
    expect(at).toBeGreaterThanOrEqual(48);
  });

  test("can be cancelled in any leg", async () => {
    let fired = false;
    const timer = longTimeout(() => (fired = true), 50, 20);
    await Bun.sleep(30);
    timer.cancel();
    await Bun.sleep(50);
    expect(fired).toBe(false);
  });

  test("a uint32 maximum does not fire at once", async () => {
    let fired = false;
    const timer = longTimeout(() => (fired = true), 2 ** 32 - 1);
    await Bun.sleep(20);
    timer.cancel();
    expect(fired).toBe(false);
  });
});
