import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { MutationQueue, QueueBudget } from "./mutation-queue.ts";

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return undefined;
  } catch (e) {
    return ConnectError.from(e).code;
  }
};

describe("MutationQueue", () => {
  test("mutations run one at a time in arrival order", async () => {
    const q = new MutationQueue(64, new QueueBudget(1000));
    const order: number[] = [];
    let active = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const t = await q.enter(`op${i}`, 10_000);
        active++;
        most = Math.max(most, active);
        await Bun.sleep(i % 3);
        order.push(i);
        active--;
        t.done();
      }),
    );
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(1);
    expect(q.busy).toBe(false);
  });

  test("a full queue refuses RESOURCE_EXHAUSTED (session busy); the per-runtimed budget too", async () => {
    const q = new MutationQueue(2, new QueueBudget(1000));
    const first = await q.enter("a", 10_000);
    const b = q.enter("b", 10_000);
    const c = q.enter("c", 10_000);
    expect(await codeOf(q.enter("d", 10_000))).toBe(Code.ResourceExhausted);
    first.done();
    (await b).done();
    (await c).done();
    const budget = new QueueBudget(1);
    const q1 = new MutationQueue(10, budget);
    const q2 = new MutationQueue(10, budget);
    const t1 = await q1.enter("x", 10_000);
    const t2 = await q2.enter("y", 10_000);
    const waiting = q1.enter("x2", 10_000);
    expect(await codeOf(q2.enter("y2", 10_000))).toBe(Code.ResourceExhausted);
    t1.done();
    (await waiting).done();
    t2.done();
    expect(budget.inUse).toBe(0);
  });

  test("the operation timeout counts the queue wait: DEADLINE_EXCEEDED, and the queue moves on", async () => {
    const q = new MutationQueue(8, new QueueBudget(100));
    const first = await q.enter("a", 10_000);
    const late = q.enter("b", 20);
    const next = q.enter("c", 10_000);
    expect(await codeOf(late)).toBe(Code.DeadlineExceeded);
    first.done();
    const t = await next;
    expect(t.remainingMs).toBeGreaterThan(0);
    t.done();
  });

  test("cancel: a queued operation is rejected CANCELLED, a running one gets its hook", async () => {
    const q = new MutationQueue(8, new QueueBudget(100));
    const first = await q.enter("a", 10_000);
    let hooked = 0;
    first.onCancel(() => hooked++);
    const queued = q.enter("b", 10_000);
    expect(q.cancel("b")).toBe(true);
    expect(await codeOf(queued)).toBe(Code.Canceled);
    expect(q.cancel("a")).toBe(true);
    expect(hooked).toBe(1);
    expect(q.cancel("zzz")).toBe(false);
    first.done();
    expect(q.busy).toBe(false);
  });

  test("a caller that goes away leaves the queue", async () => {
    const q = new MutationQueue(8, new QueueBudget(100));
    const first = await q.enter("a", 10_000);
    const ac = new AbortController();
    const gone = q.enter("b", 10_000, ac.signal);
    ac.abort();
    expect(await codeOf(gone)).toBe(Code.Canceled);
    expect(q.depth).toBe(0);
    first.done();
  });

  test("close(cancel) rejects the queued, cancels the running and refuses new ones; close(drain) lets them finish", async () => {
    const q = new MutationQueue(8, new QueueBudget(100));
    const first = await q.enter("a", 10_000);
    let hooked = false;
    first.onCancel(() => (hooked = true));
    const queued = q.enter("b", 10_000);
    q.close("cancel", "the session was cancelled");
    expect(await codeOf(queued)).toBe(Code.Canceled);
    expect(hooked).toBe(true);
    expect(await codeOf(q.enter("c", 10_000))).toBe(Code.FailedPrecondition);
    first.done();
    await q.idle();

    const d = new MutationQueue(8, new QueueBudget(100));
    const x = await d.enter("x", 10_000);
    const y = d.enter("y", 10_000);
    d.close("drain", "the session is finalizing");
    expect(await codeOf(d.enter("z", 10_000))).toBe(Code.FailedPrecondition);
    let idle = false;
    const idled = d.idle().then(() => (idle = true));
    x.done();
    (await y).done();
    await idled;
    expect(idle).toBe(true);
  });
});
