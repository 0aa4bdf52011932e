import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import {
  OutputStream,
  type TaskEvent,
  TaskEventSchema,
} from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { Subscription } from "./subscription.ts";

const output = (n: number): TaskEvent =>
  create(TaskEventSchema, {
    event: { case: "output", value: { stream: OutputStream.STDOUT, data: new Uint8Array(n), offset: 0n } },
  });

describe("Subscription", () => {
  test("delivers queued events then ends", async () => {
    const left: Subscription[] = [];
    const sub = new Subscription((s) => left.push(s), 1000);
    sub.push(output(1));
    sub.push(output(2));
    sub.end();
    const sizes: number[] = [];
    for await (const event of sub.iterate(new AbortController().signal)) {
      if (event.event.case === "output") sizes.push(event.event.value.data.length);
    }
    expect(sizes).toEqual([1, 2]);
    expect(left).toEqual([sub]);
  });

  test("whenBelow waits for the consumer past the high-water mark", async () => {
    const sub = new Subscription(() => {}, 10);
    sub.push(output(8));
    let released = false;
    sub.push(output(8));
    const waiting = sub.whenBelow().then(() => {
      released = true;
    });
    await Bun.sleep(5);
    expect(released).toBe(false);
    const it = sub.iterate(new AbortController().signal);
    await it.next();
    await waiting;
    expect(released).toBe(true);
  });

  test("abort ends a consumer blocked on an empty queue and releases writers", async () => {
    const left: Subscription[] = [];
    const sub = new Subscription((s) => left.push(s), 1);
    const controller = new AbortController();
    const consumed = (async () => {
      const events: TaskEvent[] = [];
      for await (const event of sub.iterate(controller.signal)) events.push(event);
      return events;
    })();
    await Bun.sleep(5);
    controller.abort();
    expect(await consumed).toEqual([]);
    expect(sub.done).toBe(true);
    expect(left.length).toBeGreaterThan(0);
    sub.push(output(100));
    await sub.whenBelow();
  });
});
