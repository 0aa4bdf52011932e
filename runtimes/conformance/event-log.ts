/**
 * Collects one Execute or Watch stream as it arrives, so tests can wait for a condition ("the
 * script printed ready") instead of sleeping, and then check everything the stream carried.
 */
import type {
  TaskEvent,
  TaskExited,
  TaskOutput,
  TaskStarted,
} from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { OutputStream } from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";

const decoder = new TextDecoder();

export class EventLog {
  readonly events: TaskEvent[] = [];
  /** Resolves when the stream ends; rejects with the stream's error. */
  readonly done: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(stream: AsyncIterable<{ event?: TaskEvent | undefined }>) {
    this.done = (async () => {
      try {
        for await (const message of stream) {
          if (message.event !== undefined) this.events.push(message.event);
          this.wake();
        }
      } finally {
        this.wake();
      }
    })();
    this.done.catch(() => {});
  }

  get started(): TaskStarted | undefined {
    for (const e of this.events) if (e.event.case === "started") return e.event.value;
    return undefined;
  }

  get exited(): TaskExited | undefined {
    for (const e of this.events) if (e.event.case === "exited") return e.event.value;
    return undefined;
  }

  outputs(stream: OutputStream): TaskOutput[] {
    const out: TaskOutput[] = [];
    for (const e of this.events)
      if (e.event.case === "output" && e.event.value.stream === stream) out.push(e.event.value);
    return out;
  }

  text(stream: OutputStream = OutputStream.STDOUT): string {
    return this.outputs(stream)
      .map((o) => decoder.decode(o.data))
      .join("");
  }

  /** Waits until `predicate` holds (checked on every event) or the stream ends. */
  async until(predicate: (log: EventLog) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    this.done.then(
      () => (ended = true),
      () => (ended = true),
    );
    while (!predicate(this)) {
      if (ended) throw new Error(`stream ended before the condition held; events: ${describe(this.events)}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`condition not met in ${timeoutMs} ms; events: ${describe(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for the end of the stream and returns its TaskExited. */
  async finished(): Promise<TaskExited> {
    await this.done;
    const exited = this.exited;
    if (exited === undefined) throw new Error(`stream ended without TaskExited: ${describe(this.events)}`);
    return exited;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

export function tailText(data: Uint8Array): string {
  return decoder.decode(data);
}

function describe(events: TaskEvent[]): string {
  return JSON.stringify(
    events.map((e) => ({
      case: e.event.case,
      value: e.event.value,
    })),
    (_key, value) =>
      typeof value === "bigint" ? Number(value) : value instanceof Uint8Array ? decoder.decode(value) : value,
  ).slice(0, 2000);
}
