/**
 * EventQueue carries one Exec's events to its one stream. It never drops: the producer (the
 * command's pipe readers) waits through `whenBelow` while the consumer lags by more than
 * `highWaterBytes`, which stops reading the pipes (backpressure on the command). The consumer's
 * abort signal ends the iteration at once.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private queue: T[] = [];
  private bytes = 0;
  private ended = false;
  private wake: (() => void) | undefined;
  private drained: Array<() => void> = [];

  constructor(
    private readonly highWaterBytes: number,
    private readonly sizeOf: (event: T) => number,
  ) {}

  push(event: T): void {
    if (this.ended) return;
    this.queue.push(event);
    this.bytes += this.sizeOf(event);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  whenBelow(): Promise<void> {
    if (this.bytes < this.highWaterBytes || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  async *iterate(signal?: AbortSignal): AsyncGenerator<T> {
    const onAbort = () => this.wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      while (signal?.aborted !== true) {
        const event = this.queue.shift();
        if (event !== undefined) {
          this.bytes -= this.sizeOf(event);
          if (this.bytes < this.highWaterBytes) this.release();
          yield event;
          continue;
        }
        if (this.ended) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.ended = true;
      this.queue = [];
      this.bytes = 0;
      this.release();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.iterate();
  }

  private release(): void {
    const waiters = this.drained;
    this.drained = [];
    for (const resolve of waiters) resolve();
  }
}
