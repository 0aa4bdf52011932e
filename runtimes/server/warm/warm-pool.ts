/**
 * WarmPool keeps up to `size` interpreters pre-started. Refills run in the background, one
 * interpreter at a time (each waits until the previous one is ready), so filling never competes
 * with Runs for more than one core. A refill starts REFILL_DELAY_MS after an interpreter was
 * taken: spawning blocks the event loop for a millisecond or more, and doing it at once would put
 * that on the critical path of the very Run that took the interpreter (measured: bash warm no-op
 * 10.8 → 6.5 ms p50, see bench/results). When the pool is empty the refill starts at once, as
 * the next Run would otherwise pay a whole cold start. Interpreters that die while idle are
 * replaced; repeated start failures back off exponentially up to 30 s.
 */
import type { Logger } from "../logger.ts";
import type { WarmProcess } from "./warm-process.ts";

export type SpawnWarm = () => WarmProcess;

const MAX_BACKOFF_MS = 30_000;
/** Delay between handing out an interpreter and starting its replacement. */
export const REFILL_DELAY_MS = 20;

export class WarmPool {
  private idle: WarmProcess[] = [];
  private filling = false;
  private closed = false;
  private failures = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly size: number,
    private readonly spawn: SpawnWarm,
    private readonly logger: Logger,
  ) {}

  /** Interpreters that are started and waiting for a job. */
  get ready(): number {
    let n = 0;
    for (const warm of this.idle) if (warm.isReady) n++;
    return n;
  }

  /** Starts filling; resolves when the pool is full the first time (or the pool gave up trying). */
  async start(): Promise<void> {
    await this.fill();
  }

  /** A warm interpreter for a Run, ready ones first; undefined when the pool is empty. */
  take(): WarmProcess | undefined {
    let at = this.idle.findIndex((warm) => warm.isReady);
    if (at === -1) at = this.idle.findIndex((warm) => !warm.isExited);
    if (at === -1) return undefined;
    const [warm] = this.idle.splice(at, 1);
    if (this.idle.length === 0) setImmediate(() => void this.fill());
    else setTimeout(() => void this.fill(), REFILL_DELAY_MS).unref?.();
    return warm;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    for (const warm of this.idle) warm.kill();
    this.idle = [];
  }

  private async fill(): Promise<void> {
    if (this.filling || this.closed) return;
    this.filling = true;
    try {
      while (!this.closed && this.idle.length < this.size) {
        if (!(await this.addOne())) {
          this.failures++;
          const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** (this.failures - 1));
          this.logger.warn(
            { failures: this.failures, retryInMs: delay },
            "warm pool: retrying after a failed start",
          );
          clearTimeout(this.retryTimer);
          this.retryTimer = setTimeout(() => void this.fill(), delay);
          this.retryTimer.unref?.();
          return;
        }
        this.failures = 0;
      }
    } finally {
      this.filling = false;
    }
  }

  /** Spawns one interpreter and waits until it is ready; false when it failed to get there. */
  private async addOne(): Promise<boolean> {
    let warm: WarmProcess;
    try {
      warm = this.spawn();
    } catch (error) {
      this.logger.error({ err: error }, "warm interpreter spawn failed");
      return false;
    }
    this.idle.push(warm);
    warm.exited.then(() => this.forget(warm));
    try {
      await warm.ready;
      return true;
    } catch (error) {
      this.logger.error({ pid: warm.pid, err: error }, "warm interpreter failed to start");
      this.forget(warm);
      return false;
    }
  }

  private forget(warm: WarmProcess): void {
    const at = this.idle.indexOf(warm);
    if (at === -1) return;
    this.idle.splice(at, 1);
    if (!this.closed) {
      this.logger.warn({ pid: warm.pid }, "idle warm interpreter exited; replacing it");
      setImmediate(() => void this.fill());
    }
  }
}
