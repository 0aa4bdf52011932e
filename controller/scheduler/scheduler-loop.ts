/**
 * Drives the scheduler while this process leads: pops Runs and runs cycles, bounded by the bind
 * concurrency, yielding to the event loop regularly so watch events and bind responses get in.
 * Also the leader's maintenance timers: expiring unconfirmed assumptions (armed only while any
 * exist) and the slow safety flush of long-parked Runs.
 */
import type { Clock } from "../util/clock.ts";
import type { Timers } from "../util/timers.ts";
import type { Scheduler } from "./scheduler.ts";

export interface LoopOptions {
  /** Runs parked longer than this are retried anyway (safety net, not the wake mechanism). */
  parkedFlushMs: number;
  /** How long an assumed bind may stay unconfirmed (checked every half of it). */
  assumeTtlMs: number;
}

/** Cycles between yields to the event loop. */
const BATCH = 128;

export class SchedulerLoop {
  private running = false;
  private expiryArmed = false;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly opts: LoopOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.armFlush();
    void this.loop();
  }

  stop(): void {
    this.running = false;
    this.timers.clear("parked-flush");
    this.timers.clear("assume-expiry");
    this.expiryArmed = false;
    this.scheduler.queue.interrupt();
  }

  private async loop(): Promise<void> {
    const { queue, binds } = this.scheduler;
    let n = 0;
    while (this.running) {
      if (!binds.hasSlot()) {
        await binds.slotFreed();
        continue;
      }
      const qr = queue.pop();
      if (!qr) {
        await queue.waitForActive();
        continue;
      }
      if (this.scheduler.scheduleOne(qr)) this.armExpiry();
      if (++n % BATCH === 0) await new Promise((r) => setImmediate(r));
    }
  }

  private armExpiry(): void {
    if (this.expiryArmed) return;
    this.expiryArmed = true;
    this.timers.set("assume-expiry", this.opts.assumeTtlMs / 2, () => {
      this.expiryArmed = false;
      this.scheduler.expireAssumed();
      if (this.running && this.scheduler.cache.accounts.assumedCount > 0) this.armExpiry();
    });
  }

  private armFlush(): void {
    this.timers.set("parked-flush", this.opts.parkedFlushMs, () => {
      this.scheduler.queue.flushParkedBefore(this.clock.now() - this.opts.parkedFlushMs);
      if (this.running) this.armFlush();
    });
  }
}
