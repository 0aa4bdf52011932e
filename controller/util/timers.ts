/** Named one-shot timers (re-setting a name replaces its timer); a manual variant for tests. */
import type { ManualClock } from "./clock.ts";

export interface Timers {
  set(name: string, delayMs: number, fn: () => void): void;
  clear(name: string): void;
  clearAll(): void;
}

export class RealTimers implements Timers {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();

  set(name: string, delayMs: number, fn: () => void): void {
    this.clear(name);
    const t = setTimeout(
      () => {
        this.timers.delete(name);
        fn();
      },
      Math.max(0, delayMs),
    );
    this.timers.set(name, t);
  }

  clear(name: string): void {
    const t = this.timers.get(name);
    if (t !== undefined) {
      clearTimeout(t);
      this.timers.delete(name);
    }
  }

  clearAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

/** Timers that fire only when the test advances its ManualClock through `advance`. */
export class ManualTimers implements Timers {
  private readonly pending = new Map<string, { at: number; fn: () => void }>();

  constructor(private readonly clock: ManualClock) {}

  set(name: string, delayMs: number, fn: () => void): void {
    this.pending.set(name, { at: this.clock.now() + Math.max(0, delayMs), fn });
  }
  clear(name: string): void {
    this.pending.delete(name);
  }
  clearAll(): void {
    this.pending.clear();
  }
  has(name: string): boolean {
    return this.pending.has(name);
  }

  /** Moves the clock forward, firing due timers in time order. */
  advance(ms: number): void {
    const end = this.clock.now() + ms;
    for (;;) {
      let next: [string, { at: number; fn: () => void }] | undefined;
      for (const e of this.pending) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.clock.advance(next[1].at - this.clock.now());
      this.pending.delete(next[0]);
      next[1].fn();
    }
    this.clock.advance(end - this.clock.now());
  }
}
