/** The leader Lease's record and the observed-time rule that decides when it has expired. */
import type { Lease } from "../kube-types.ts";

export interface Observed {
  /** The record as last seen (holder + renewTime + transitions), to notice changes. */
  fingerprint: string;
  /** Local epoch ms at which that record was first seen. */
  atMs: number;
}

export function fingerprint(lease: Lease): string {
  const s = lease.spec ?? {};
  return `${s.holderIdentity ?? ""}|${s.renewTime ?? ""}|${s.leaseTransitions ?? 0}`;
}

/**
 * Another holder's Lease counts as expired once this process has seen it unchanged for the
 * lease duration — measured on the local clock, never by comparing the holder's timestamps.
 */
export function heldByOther(
  lease: Lease,
  identity: string,
  observed: Observed,
  nowMs: number,
  durationMs: number,
) {
  const holder = lease.spec?.holderIdentity ?? "";
  if (holder === "" || holder === identity) return false;
  return nowMs < observed.atMs + durationMs;
}
