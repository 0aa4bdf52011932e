import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireInstanceLock } from "./instance-lock.ts";

describe("instance lock", () => {
  test("a live holder refuses a second agent; a stale lock is taken over", async () => {
    const dir = mkdtempSync("/tmp/krt-lock-");
    const other = Bun.spawn(["sleep", "30"], { stdio: ["ignore", "ignore", "ignore"] });
    await Bun.sleep(20);
    acquireInstanceLock(dir, other.pid);
    expect(() => acquireInstanceLock(dir)).toThrow(
      `another node agent (pid ${other.pid}) is running on ${dir}`,
    );
    other.kill("SIGKILL");
    await other.exited;
    acquireInstanceLock(dir);
    // A reused pid (same number, other start time) does not hold the lock either.
    writeFileSync(join(dir, "agent.pid"), JSON.stringify({ pid: 1, startTicks: -1 }));
    acquireInstanceLock(dir);
  });
});
