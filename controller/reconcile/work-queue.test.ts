import { describe, expect, test } from "bun:test";
import { WorkQueue } from "./work-queue.ts";

describe("WorkQueue", () => {
  test("a key is queued once however often it is added", () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("a");
    q.add("b");
    expect(q.length).toBe(2);
    expect(q.tryGet()).toBe("a");
    expect(q.tryGet()).toBe("b");
    expect(q.tryGet()).toBeUndefined();
  });

  test("an add while processing queues the key again after done, not before", () => {
    const q = new WorkQueue();
    q.add("a");
    expect(q.tryGet()).toBe("a");
    q.add("a");
    expect(q.tryGet()).toBeUndefined();
    q.done("a");
    expect(q.tryGet()).toBe("a");
    q.done("a");
    expect(q.tryGet()).toBeUndefined();
  });

  test("get waits for the next add", async () => {
    const q = new WorkQueue();
    const p = q.get();
    q.add("x");
    expect(await p).toBe("x");
  });

  test("addAfter delivers after the delay; the earliest delay wins", async () => {
    const q = new WorkQueue();
    q.addAfter("a", 60);
    q.addAfter("a", 20);
    q.addAfter("a", 80);
    // b is due between a's earliest (20 ms) and the later delays: it comes second only if 20 won.
    q.addAfter("b", 40);
    expect(q.delayedLength).toBe(2);
    const t0 = Date.now();
    expect(await q.get()).toBe("a");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(15);
    expect(await q.get()).toBe("b");
  });

  test("backoff doubles per failure up to the cap and forget resets it", () => {
    const q = new WorkQueue({ baseBackoffMs: 10, maxBackoffMs: 50 });
    expect([0, 1, 2, 3, 4].map((n) => q.backoffFor(n))).toEqual([10, 20, 40, 50, 50]);
  });

  test("shutdown releases waiting getters", async () => {
    const q = new WorkQueue();
    const p = q.get();
    q.shutdown();
    expect(await p).toBeUndefined();
  });
});
