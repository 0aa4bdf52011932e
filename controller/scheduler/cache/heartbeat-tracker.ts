/**
 * runtimed heartbeats per pod key (a Lease may arrive before its pod), with two timers per pod:
 * when the heartbeat stops being fresh (the pod stops accepting Runs) and when it is stale past
 * the recovery threshold (the pod's Runs are taken back). Each Lease event re-arms both.
 */
import type { Lease } from "../../kube-types.ts";
import type { Timers } from "../../util/timers.ts";
import { type Heartbeat, observeLease } from "./heartbeat.ts";

export interface HeartbeatEvents {
  expired(podKey: string): void;
  stale(podKey: string): void;
}

export class HeartbeatTracker {
  private readonly beats = new Map<string, Heartbeat>();

  constructor(
    private readonly timers: Timers,
    private readonly staleAfterMs: number,
    private readonly events: HeartbeatEvents,
  ) {}

  get(podKey: string): Heartbeat | undefined {
    return this.beats.get(podKey);
  }

  observe(podKey: string, lease: Lease, nowMs: number): Heartbeat {
    const hb = observeLease(lease, this.beats.get(podKey), nowMs);
    this.beats.set(podKey, hb);
    this.timers.set(`expire/${podKey}`, hb.observedMs + hb.durationMs - nowMs, () =>
      this.events.expired(podKey),
    );
    this.timers.set(`stale/${podKey}`, hb.staleBaseMs + this.staleAfterMs - nowMs, () =>
      this.events.stale(podKey),
    );
    return hb;
  }

  /**
   * This process could not watch Leases for a while (its watch failed and it relisted): renewals
   * it did not see are not silence, so every pod's stale period starts again from `nowMs`.
   */
  rebase(nowMs: number): void {
    for (const [podKey, hb] of this.beats) {
      if (hb.staleBaseMs >= nowMs) continue;
      this.beats.set(podKey, { ...hb, staleBaseMs: nowMs });
      this.timers.set(`stale/${podKey}`, this.staleAfterMs, () => this.events.stale(podKey));
    }
  }

  remove(podKey: string): void {
    this.beats.delete(podKey);
    this.timers.clear(`expire/${podKey}`);
    this.timers.clear(`stale/${podKey}`);
  }
}
