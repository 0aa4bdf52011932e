/**
 * The per-process bound on calls in flight (--max-concurrent-requests). No queue: a call over the
 * bound is refused at once with 429 GATEWAY_BUSY, so a saturated gateway sheds load instead of
 * building latency.
 */
import { ErrorReason, GatewayError } from "../errors.ts";

export class ConcurrencyLimit {
  private inFlight = 0;

  constructor(readonly max: number) {}

  get current(): number {
    return this.inFlight;
  }

  /** Takes a slot or throws GatewayBusy; call the returned function exactly once when done. */
  acquire(): () => void {
    if (this.inFlight >= this.max) {
      throw new GatewayError(ErrorReason.GatewayBusy, `the gateway has ${this.max} calls in flight`);
    }
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }
}
