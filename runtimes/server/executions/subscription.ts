/**
 * Subscription is one stream consumer of an execution's events (an Execute or Watch call). It
 * buffers without dropping; the execution's reader waits for slow subscribers (backpressure on
 * the Run's pipes) through `whenBelow`. An abort signal ends the iteration promptly, so a client
 * that goes away never pins the execution.
 */
import type { TaskEvent } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";

export class Subscription implements AsyncIterable<TaskEvent> {
  private queue: TaskEvent[] = [];
  private bytes = 0;
  private closed = false;
  private gone = false;
  private wake: (() => void) | undefined;
  private drained: Array<() => void> = [];

  constructor(
    private readonly onDone: (sub: Subscription) => void,
    private readonly highWaterBytes: number,
  ) {}

  /** Bytes queued and not yet taken by the consumer. */
  get buffered(): number {
    return this.bytes;
  }

  get done(): boolean {
    return this.closed;
  }

  push(event: TaskEvent): void {
    if (this.closed) return;
    this.queue.push(event);
    this.bytes += sizeOf(event);
    this.wake?.();
  }

  /** No more events will come; the consumer still gets those already queued. */
  end(): void {
    this.closed = true;
    this.wake?.();
  }

  /** Resolves once this subscriber has taken enough to be under its high-water mark (or left). */
  whenBelow(): Promise<void> {
    if (this.bytes < this.highWaterBytes || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  async *iterate(signal: AbortSignal): AsyncGenerator<TaskEvent> {
    const onAbort = () => this.leave();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const event = this.queue.shift();
        if (event !== undefined) {
          this.bytes -= sizeOf(event);
          if (this.bytes < this.highWaterBytes) this.release();
          yield event;
          continue;
        }
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.leave();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<TaskEvent> {
    return this.iterate(new AbortController().signal);
  }

  private leave(): void {
    if (this.gone) return;
    this.gone = true;
    this.closed = true;
    this.queue = [];
    this.bytes = 0;
    this.release();
    this.wake?.();
    this.onDone(this);
  }

  private release(): void {
    const waiters = this.drained;
    this.drained = [];
    for (const resolve of waiters) resolve();
  }
}

function sizeOf(event: TaskEvent): number {
  return event.event.case === "output" ? event.event.value.data.length : 64;
}
