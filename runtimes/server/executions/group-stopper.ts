/**
 * Stops a Run's process group: SIGTERM once, SIGKILL when the earliest requested grace is over
 * (a later request can shorten the grace, never extend it), or SIGKILL at once for a zero grace.
 */
import { type LongTimer, longTimeout } from "../long-timer.ts";
import { signalGroup } from "../process-group.ts";

export class GroupStopper {
  private termSent = false;
  private killAt = Number.POSITIVE_INFINITY;
  private killTimer: LongTimer | undefined;

  constructor(private readonly pgid: number) {}

  stop(graceMs: number): void {
    if (graceMs <= 0) {
      this.killAt = 0;
      this.killTimer?.cancel();
      signalGroup(this.pgid, "SIGKILL");
      return;
    }
    if (!this.termSent) {
      this.termSent = true;
      signalGroup(this.pgid, "SIGTERM");
    }
    const at = Date.now() + graceMs;
    if (at < this.killAt) {
      this.killAt = at;
      this.killTimer?.cancel();
      this.killTimer = longTimeout(() => signalGroup(this.pgid, "SIGKILL"), graceMs);
    }
  }

  /** The main process is gone: no pending SIGKILL may hit a recycled group id later. */
  clear(): void {
    this.killTimer?.cancel();
  }
}
