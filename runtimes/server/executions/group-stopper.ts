/**
 * Stops a Run's process group: SIGTERM once, SIGKILL when the earliest requested grace is over
 * (a later request can shorten the grace, never extend it), or SIGKILL at once for a zero grace.
 */
import { signalGroup } from "../process-group.ts";

export class GroupStopper {
  private termSent = false;
  private killAt = Number.POSITIVE_INFINITY;
  private killTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly pgid: number) {}

  stop(graceMs: number): void {
    if (graceMs <= 0) {
      this.killAt = 0;
      clearTimeout(this.killTimer);
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
      clearTimeout(this.killTimer);
      this.killTimer = setTimeout(() => signalGroup(this.pgid, "SIGKILL"), graceMs);
    }
  }

  /** The main process is gone: no pending SIGKILL may hit a recycled group id later. */
  clear(): void {
    clearTimeout(this.killTimer);
  }
}
