/**
 * runtimed's heartbeat, read from its Lease. Freshness is judged against the time *this process*
 * saw the Lease change (as client-go's leader election does), so clock skew between the pod and
 * the controller does not matter; only on first sight, with nothing observed yet, the Lease's own
 * renewTime is used (capped at now), so a Lease that stopped long ago is not taken for fresh.
 */
import { type Lease, parseTime } from "../../kube-types.ts";

export interface Heartbeat {
  readonly holder: string;
  readonly renewTime: string;
  /** Local epoch ms at which the current renewTime was first seen. */
  readonly observedMs: number;
  readonly durationMs: number;
}

/** Default when a Lease has no leaseDurationSeconds (runtimed sets 10). */
const DEFAULT_DURATION_MS = 10_000;

export function observeLease(lease: Lease, previous: Heartbeat | undefined, nowMs: number): Heartbeat {
  const holder = lease.spec?.holderIdentity ?? "";
  const renewTime = lease.spec?.renewTime ?? "";
  const seconds = lease.spec?.leaseDurationSeconds;
  const durationMs = seconds && seconds > 0 ? seconds * 1000 : DEFAULT_DURATION_MS;
  if (previous && previous.renewTime === renewTime && previous.holder === holder) {
    return previous.durationMs === durationMs ? previous : { ...previous, durationMs };
  }
  let observedMs = nowMs;
  if (!previous) {
    const stamped = parseTime(renewTime);
    observedMs = Number.isFinite(stamped) ? Math.min(nowMs, stamped) : Number.NEGATIVE_INFINITY;
  }
  return { holder, renewTime, observedMs, durationMs };
}

export function isFresh(hb: Heartbeat, nowMs: number): boolean {
  return nowMs < hb.observedMs + hb.durationMs;
}
