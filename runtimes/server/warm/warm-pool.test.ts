import { describe, expect, test } from "bun:test";
import pino from "pino";
import { WarmPool } from "./warm-pool.ts";
import { WarmProcess } from "./warm-process.ts";

const spawnWith = (script: string) => () =>
  new WarmProcess(
    Bun.spawn({
      cmd: ["/bin/bash", "--norc", "-c", script],
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    }),
  );

describe("WarmPool", () => {
  test("fills to its size, hands out ready interpreters and refills", async () => {
    const pool = new WarmPool(2, spawnWith("printf R; read -r x; echo got:$x"), pino({ level: "silent" }));
    await pool.start();
    expect(pool.ready).toBe(2);
    const warm = pool.take()!;
    expect(warm.isReady).toBe(true);
    const run = warm.dispatch(new TextEncoder().encode("job\n"));
    expect((await run.exited).exitCode).toBe(0);
    const { value } = await run.stdout.read();
    expect(new TextDecoder().decode(value)).toBe("got:job\n");
    // The refill spawns a new interpreter: wait for it however long that takes here.
    const deadline = Date.now() + 30_000;
    while (pool.ready < 2 && Date.now() < deadline) await Bun.sleep(10);
    expect(pool.ready).toBe(2);
    pool.close();
  }, 60_000);

  test("an interpreter that dies before it is ready is logged with its status and stderr", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const pool = new WarmPool(1, spawnWith("echo broken >&2; exit 3"), logger);
    await pool.start();
    pool.close();
    expect(pool.ready).toBe(0);
    const failure = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "warm interpreter failed to start");
    expect(failure?.err?.message).toBe("warm interpreter did not get ready (exit status 3): broken");
  });
});
