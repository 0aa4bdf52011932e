/** Time sources: wall-clock microseconds for Run timing, and an injectable clock for tests. */

/** Wall-clock microseconds since the Unix epoch (sub-millisecond precision; see api/src/clock.ts). */
export { nowMicros } from "@kruntimes/api";

/** Milliseconds since the epoch; the scheduler, recovery and GC read time only through this. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = 1_700_000_000_000) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
