import { describe, expect, test } from "bun:test";
import { Backoff } from "./backoff.ts";
import { WorkQueue } from "./work-queue.ts";

/** Polls (up to 30 s) for a state the queue's real timers lead to. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out after 30000ms");
    await Bun.sleep(5);
  }
}

describe("work queue", () => {
  test("a key queued twice runs once; added while running it runs again after; never concurrently", async () => {
    const runs: string[] = [];
    let concurrent = 0;
    let maxConcurrent = 0;
    const q = new WorkQueue(
      async (k) => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        runs.push(k);
        if (runs.length === 1) q.add("a");
        await Bun.sleep(10);
        concurrent--;
        return undefined;
      },
      { workers: 4, retryInitialMs: 5, retryMaxMs: 20, onError() {} },
    );
    q.add("a");
    q.add("a");
    q.start();
    await until(() => runs.length >= 2 && concurrent === 0);
    // Idle now (nothing queued, running or timed): no further run can come.
    expect(q.length).toBe(0);
    expect(runs).toEqual(["a", "a"]);
    expect(maxConcurrent).toBe(1);
    q.stop();
  }, 60_000);
  test("a throwing sync retries with growing backoff; requeueAfterMs schedules another run", async () => {
    const at: number[] = [];
    const delays: number[] = [];
    const q = new WorkQueue(
      async () => {
        at.push(Date.now());
        if (at.length < 3) throw new Error("boom");
        if (at.length === 3) return { requeueAfterMs: 30 };
        return undefined;
      },
      { workers: 1, retryInitialMs: 10, retryMaxMs: 1000, onError: (_k, _e, ms) => delays.push(ms) },
    );
    q.start();
    q.add("k");
    // Two retries and the requeue: however long those take here, the fourth run ends it.
    await until(() => at.length >= 4);
    await Bun.sleep(0);
    expect(at.length).toBe(4);
    q.stop();
    expect(delays).toEqual([10, 20]);
    expect(at[3]! - at[2]!).toBeGreaterThanOrEqual(28);
  }, 60_000);
  test("backoff doubles to its cap and resets", () => {
    const b = new Backoff(100, 350);
    expect([b.next("x"), b.next("x"), b.next("x"), b.next("x")]).toEqual([100, 200, 350, 350]);
    b.reset("x");
    expect(b.next("x")).toBe(100);
  });
});
