import { describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { freePorts } from "./ports.ts";

describe("freePorts", () => {
  test("distinct ports in one call, every time (a cluster's listeners must not share one)", async () => {
    for (let i = 0; i < 50; i++) {
      const ports = await freePorts(8);
      expect(new Set(ports).size).toBe(8);
      for (const p of ports) expect(p).toBeGreaterThan(0);
    }
  });

  test("never a port in `avoid`, and each is free to listen on", async () => {
    const first = await freePorts(4);
    const next = await freePorts(16, first);
    for (const p of next) expect(first).not.toContain(p);
    const s = createServer();
    await new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(next[0], "127.0.0.1", () => resolve());
    });
    await new Promise<void>((r) => s.close(() => r()));
  });
});
