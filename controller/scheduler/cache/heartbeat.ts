/**
 * runtimed's heartbeat, read from its Lease. Freshness is judged against the time *this process*
 * saw the Lease change (as client-go's leader election does), so clock skew between the pod and
 * the controller does not matter; only on first sight, with nothing observed yet, the Lease's own
 * renewTime is used (capped at now), so a Lease that stopped long ago is not taken for fresh.
 *
 * Whether runtimed is *lost* (its Runs taken back) is counted from `staleBaseMs`: the last renewal
 * this process saw, or — on first sight, or after this process could not watch Leases for a while
 * — the moment it started watching. A controller that starts (or regains the apiserver) after an
 * outage has not seen the pods fall silent: the renewals missing are the outage's, not theirs, so
 * each pod gets a full stale period of observation first (the node lifecycle controller's rule).
 */
import { type Lease, parseTime } from "../../kube-types.ts";

export interface Heartbeat {
  readonly holder: string;
  readonly renewTime: string;
  /** Local epoch ms at which the current renewTime was first seen. */
  readonly observedMs: number;
  /** Local epoch ms from which "has not renewed" is counted (see the module comment). */
  readonly staleBaseMs: number;
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
  return { holder, renewTime, observedMs, staleBaseMs: nowMs, durationMs };
}

export function isFresh(hb: Heartbeat, nowMs: number): boolean {
  return nowMs < hb.observedMs + hb.durationMs;
}
