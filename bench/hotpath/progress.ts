/**
 * Progress of a long benchmark on stderr: one line rewritten in place on a terminal, at most one
 * line every few seconds otherwise (CI logs), and the final line of each step always.
 */
import type { Writable } from "node:stream";

const TTY_INTERVAL_MS = 100;
const PLAIN_INTERVAL_MS = 5000;

export class Progress {
  private last = 0;
  private shown = false;

  constructor(
    private readonly out: Writable,
    private readonly tty: boolean,
    private readonly quiet = false,
  ) {}

  /** A transient status, throttled. */
  update(text: string): void {
    if (this.quiet) return;
    const now = Date.now();
    if (now - this.last < (this.tty ? TTY_INTERVAL_MS : PLAIN_INTERVAL_MS)) return;
    this.last = now;
    if (this.tty) {
      this.out.write(`\r\x1b[K${text}`);
      this.shown = true;
    } else this.out.write(`${text}\n`);
  }

  /** A line that stays. */
  line(text: string): void {
    if (this.quiet) return;
    if (this.tty && this.shown) this.out.write("\r\x1b[K");
    this.shown = false;
    this.out.write(`${text}\n`);
  }
}
