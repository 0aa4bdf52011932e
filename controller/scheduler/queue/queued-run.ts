/** A Pending Run as the scheduling queue holds it. */
import type { WaitingReason } from "@kruntimes/api";
import type { ParsedRequest } from "../run-request.ts";

export type QueueState = "active" | "backoff" | "parked" | "out";

export interface QueuedRun extends ParsedRequest {
  /** Arrival order: the queue is FIFO among Runs that are ready. */
  readonly seq: number;
  /** `status.attempt` when queued; a change re-activates a parked Run. */
  attempt: number;
  /** Not before this epoch ms (retry backoff after recovery, or error backoff). */
  notBeforeMs: number;
  /** Consecutive cycles that ended in Error, for the error backoff. */
  errors: number;
  state: QueueState;
  /** Woken for this pod's freed capacity and not cycled yet: the capacity is promised to it. */
  promisedOn?: string;
  /** While parked: why, as the waiting reason the Run should show. */
  waiting?: { reason: WaitingReason; message: string; sinceMs: number };
}
