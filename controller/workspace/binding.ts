/**
 * Which pod a PersistentWorkspace binds to: rendezvous (highest-random-weight) hashing of the
 * workspace's UID against each candidate pod's UID, the highest score winning. Deterministic —
 * any controller with the same view picks the same pod, so a failover mid-decision changes
 * nothing — and spread evenly over the pods without coordination. sha256 keeps the choice the
 * same across versions and platforms.
 */
import { createHash } from "node:crypto";

export interface Candidate {
  readonly name: string;
  readonly uid: string;
}

/** The weight of `podUid` for `workspaceUid`: the first 8 bytes of sha256(workspace "/" pod). */
export function rendezvousScore(workspaceUid: string, podUid: string): bigint {
  return createHash("sha256").update(`${workspaceUid}/${podUid}`).digest().readBigUInt64BE(0);
}

/** The candidate with the highest score (ties, which sha256 makes theoretical, by name). */
export function choosePod<C extends Candidate>(
  workspaceUid: string,
  candidates: readonly C[],
): C | undefined {
  let best: C | undefined;
  let bestScore = -1n;
  for (const c of candidates) {
    const s = rendezvousScore(workspaceUid, c.uid);
    if (s > bestScore || (s === bestScore && best !== undefined && c.name < best.name)) {
      best = c;
      bestScore = s;
    }
  }
  return best;
}
