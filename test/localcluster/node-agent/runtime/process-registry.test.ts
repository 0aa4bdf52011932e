import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { groupAlive, ProcessRegistry } from "./process-registry.ts";

describe("process registry", () => {
  test("kills a recorded group's survivors (grandchildren too) and nothing else", async () => {
    const dir = mkdtempSync("/tmp/krt-registry-");
    const reg = new ProcessRegistry(dir);
    // A group whose leader exits at once, leaving a grandchild behind: what an agent crash leaves.
    const p = Bun.spawn(["sh", "-c", "sleep 30 & exit 0"], {
      detached: true,
      stdio: ["ignore", "ignore", "ignore"],
    });
    reg.record(p.pid, "ns/p", "c");
    const bystander = Bun.spawn(["sleep", "30"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
    await p.exited;
    expect(groupAlive(p.pid)).toBe(true);
    const hit = new ProcessRegistry(dir).killLeftovers();
    expect(hit.map((r) => r.pgid)).toEqual([p.pid]);
    // SIGKILLed, the grandchild is gone once init reaps it: wait for that, however long it takes.
    const deadline = Date.now() + 30_000;
    while (groupAlive(p.pid) && Date.now() < deadline) await Bun.sleep(10);
    expect(groupAlive(p.pid)).toBe(false);
    expect(groupAlive(bystander.pid)).toBe(true);
    expect(readdirSync(join(dir, "processes"))).toEqual([]);
    bystander.kill("SIGKILL");
  }, 60_000);
});
