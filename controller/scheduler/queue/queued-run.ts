/** A Pending Run as the scheduling queue holds it. */
import type { WaitingReason } from "@kruntimes/api";
import type { ParsedRequest } from "../run-request.ts";

export type QueueState = "active" | "backoff" | "parked" | "out";

export interface QueuedRun extends ParsedRequest {
  /** Arrival order: the tie-break among Runs of equal rank. */
  readonly seq: number;
  /**
   * When the Run began waiting for its current attempt (epoch ms: its creation, or when recovery
   * sent it back); NaN when unknown, then the queue uses the time it first saw the Run.
   */
  sinceMs: number;
  /**
   * The queue's order, higher first: `priority × agingIntervalMs − sinceMs`. A Run's effective
   * priority grows by 1 per aging interval waited, so this is fixed per Run and FIFO within
   * equal effective priority. Set by the queue.
   */
  rank: number;
  /** `status.attempt` when queued; a change re-activates a parked Run. */
  attempt: number;
  /** Not before this epoch ms (retry backoff after recovery, or error backoff). */
  notBeforeMs: number;
  /** Consecutive cycles that ended in Error, for the error backoff. */
  errors: number;
  state: QueueState;
  /** Woken for this pod's freed capacity and not cycled yet: the capacity is promised to it. */
  promisedOn?: string;
  /**
   * The pod whose capacity woke the Run; kept after the pop, so a cycle that does not use that
   * pod hands its capacity on to the next Run that can use it.
   */
  wokenFor?: string;
  /** Hand-ons that led to this wake (bounded, so a pod's capacity is never passed around forever). */
  handoffs?: number;
  /** The parked group the Run is in (set by the pool). */
  group?: string;
  /** While parked: why, as the waiting reason the Run should show. */
  waiting?: { reason: WaitingReason; message: string; sinceMs: number };
}

/** Queue order: higher rank first, then arrival. */
export function before(a: QueuedRun, b: QueuedRun): boolean {
  return a.rank > b.rank || (a.rank === b.rank && a.seq < b.seq);
}
