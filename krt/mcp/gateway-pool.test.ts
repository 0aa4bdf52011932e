import { describe, expect, test } from "bun:test";
import { GatewayPool } from "./gateway-pool.ts";

/** A located gateway that records when it is closed. */
function fakeLocate() {
  const made: { id: number; closed: boolean }[] = [];
  const locate = async () => {
    const gw = { id: made.length + 1, closed: false };
    made.push(gw);
    return { id: gw.id, target: { close: () => (gw.closed = true) } };
  };
  return { made, locate };
}

const UNREACHABLE = new Error("unreachable");

describe("GatewayPool", () => {
  test("locates once and reuses it while fresh; concurrent first calls share one locate", async () => {
    const f = fakeLocate();
    const pool = new GatewayPool(f.locate, { ttlMs: 1000, unreachable: (e) => e === UNREACHABLE });
    const ids = await Promise.all([1, 2, 3].map(() => pool.use(async (g) => g.id)));
    expect(ids).toEqual([1, 1, 1]);
    expect(f.made.length).toBe(1);
  });

  test("after the TTL the next call locates again; the stale one is closed once idle", async () => {
    const f = fakeLocate();
    let now = 0;
    const pool = new GatewayPool(f.locate, { ttlMs: 1000, unreachable: () => false, now: () => now });
    let release: () => void = () => {};
    const held = pool.use((g) => new Promise<number>((r) => (release = () => r(g.id))));
    await Bun.sleep(0);
    now = 5000;
    expect(await pool.use(async (g) => g.id)).toBe(2);
    // The first gateway is still in use by the held call: not closed yet.
    expect(f.made[0]?.closed).toBe(false);
    release();
    expect(await held).toBe(1);
    await Bun.sleep(0);
    expect(f.made[0]?.closed).toBe(true);
    expect(f.made[1]?.closed).toBe(false);
  });

  test("a call that could not reach the gateway makes the next call locate again; other errors do not", async () => {
    const f = fakeLocate();
    const pool = new GatewayPool(f.locate, { ttlMs: 60_000, unreachable: (e) => e === UNREACHABLE });
    await expect(pool.use(async () => Promise.reject(new Error("the gateway said no")))).rejects.toThrow(
      "said no",
    );
    expect(await pool.use(async (g) => g.id)).toBe(1);
    await expect(pool.use(async () => Promise.reject(UNREACHABLE))).rejects.toBe(UNREACHABLE);
    await Bun.sleep(0);
    expect(f.made[0]?.closed).toBe(true);
    expect(await pool.use(async (g) => g.id)).toBe(2);
  });

  test("a failed locate is not kept", async () => {
    let fail = true;
    const pool = new GatewayPool(
      async () => {
        if (fail) throw new Error("no gateway Service");
        return { target: { close() {} } };
      },
      { ttlMs: 60_000, unreachable: () => false },
    );
    await expect(pool.use(async () => 1)).rejects.toThrow("no gateway Service");
    fail = false;
    expect(await pool.use(async () => 2)).toBe(2);
  });

  test("close() closes the gateway and refuses later calls", async () => {
    const f = fakeLocate();
    const pool = new GatewayPool(f.locate, { ttlMs: 60_000, unreachable: () => false });
    await pool.use(async () => 0);
    pool.close();
    await Bun.sleep(0);
    expect(f.made[0]?.closed).toBe(true);
    await expect(pool.use(async () => 0)).rejects.toThrow("closed");
  });
});
