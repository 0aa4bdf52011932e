/** Per-key exponential backoff: initial, doubled per failure, capped; reset on success. */
export class Backoff {
  private readonly failures = new Map<string, number>();

  constructor(
    readonly initialMs: number,
    readonly maxMs: number,
  ) {}

  /** Records a failure and returns the delay before the next attempt. */
  next(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return this.delayFor(n);
  }

  /** The delay after `failures` previous failures. */
  delayFor(failures: number): number {
    return Math.min(this.maxMs, this.initialMs * 2 ** Math.min(failures, 30));
  }

  reset(key: string): void {
    this.failures.delete(key);
  }
}
