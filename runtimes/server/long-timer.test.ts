import { describe, expect, spyOn, test } from "bun:test";
import { longTimeout } from "./long-timer.ts";

describe("longTimeout", () => {
  test("waits the whole time when it is longer than one timer may be", async () => {
    const t0 = performance.now();
    const at = await new Promise<number>((resolve) => {
      longTimeout(() => resolve(performance.now() - t0), 50, 20);
    });
    expect(at).toBeGreaterThanOrEqual(48);
  });

  test("can be cancelled in any leg", async () => {
    // Legs are counted at setTimeout, so the cancel is known to land in a later leg, however slow
    // the machine; the total is far beyond the test, so only a leg left armed could ever fire.
    const setTimeoutSpy = spyOn(globalThis, "setTimeout");
    const legs = () => setTimeoutSpy.mock.calls.filter((c) => c[1] === 20).length;
    try {
      let fired = false;
      const timer = longTimeout(() => (fired = true), 2 ** 40, 20);
      const deadline = Date.now() + 30_000;
      while (legs() < 3 && Date.now() < deadline) await Bun.sleep(5);
      expect(legs()).toBeGreaterThanOrEqual(3);
      timer.cancel();
      const armed = legs();
      // A leg still armed is due within 20 ms; a later timer (this sleep) cannot resolve first.
      await Bun.sleep(60);
      expect(legs()).toBe(armed);
      expect(fired).toBe(false);
    } finally {
      setTimeoutSpy.mockRestore();
    }
  });

  test("a uint32 maximum does not fire at once", async () => {
    let fired = false;
    const timer = longTimeout(() => (fired = true), 2 ** 32 - 1);
    await Bun.sleep(20);
    timer.cancel();
    expect(fired).toBe(false);
  });
});
