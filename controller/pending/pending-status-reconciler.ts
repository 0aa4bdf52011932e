/**
 * Reconciles what the controller shows on a Pending Run: it ends Runs that must not be
 * scheduled (cancelled, mode not served) and writes the waiting reason of a parked Run — only
 * when the reason changes (for WorkspaceUnavailable: or its message), and only once the Run has
 * waited `delayMs`, so a Run that finds a slot within that time costs no extra write.
 * InsufficientCapacity waits `capacityDelayMs`: a busy pool's slots are held for a moment after
 * their Runs end (until the terminal write is seen), so under a burst a quarter of the Runs parked
 * on it for over a second, and writing each of them a reason took apiserver writes from the binds
 * and reports that end the wait (bench/results/waiting-reason-writes-2026-12-05.md).
 */
import { Reason, type Run, type WaitingReason } from "@kruntimes/api";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import { isPending } from "../scheduler/run-request.ts";
import { fenceOps, replaceStatus } from "../status/json-patch.ts";
import { endedPendingStatus, waitingStatus } from "../status/run-status.ts";
import type { RunStatusWriter } from "../status/run-status-writer.ts";
import { resultOfWriteError } from "../status/write-result.ts";
import type { Clock } from "../util/clock.ts";
import { nowMicros } from "../util/clock.ts";
import { admit } from "./admission.ts";
import { waitingMessage } from "./waiting-message.ts";

export interface Waiting {
  reason: WaitingReason;
  message: string;
  sinceMs: number;
}

export interface PendingStatusDeps {
  runs: { get(key: string): Run | undefined };
  /** The scheduler queue's view: why the Run is parked, or undefined if it is not. */
  waitingOf(key: string): Waiting | undefined;
  writer: RunStatusWriter;
  clock: Clock;
  delayMs: number;
  /** The delay for InsufficientCapacity (default: delayMs). */
  capacityDelayMs?: number;
  /** The scheduler's write coordination: never write while the Run is being bound. */
  writes?: {
    beginStatusWrite(key: string): boolean;
    endStatusWrite(key: string, response: Run | undefined): void;
  };
}

export class PendingStatusReconciler implements Reconciler {
  readonly name = "pending-status";

  constructor(private readonly d: PendingStatusDeps) {}

  async reconcile(key: string): Promise<Result> {
    const run = this.d.runs.get(key);
    if (!run || !isPending(run) || run.metadata.deletionTimestamp) return Result.done();
    const now = this.d.clock.now();
    const admission = admit(run);
    if (admission.kind === "end") {
      const next = endedPendingStatus(
        run,
        admission.phase,
        admission.reason,
        admission.message,
        nowMicros(),
        now,
      );
      return this.write(key, run, next);
    }
    const waiting = this.d.waitingOf(key);
    if (!waiting) return Result.done();
    const delay =
      waiting.reason === Reason.InsufficientCapacity
        ? (this.d.capacityDelayMs ?? this.d.delayMs)
        : this.d.delayMs;
    const due = waiting.sinceMs + delay;
    if (now < due) return Result.requeueAfter(due - now);
    const message = waitingMessage(run, waiting.reason, waiting.message);
    // Written when the reason changes; for a workspace also when what it waits for does
    // (not found → Released → Lost are one reason, and the message is what tells them apart).
    if (
      run.status?.waitingReason === waiting.reason &&
      (waiting.reason !== Reason.WorkspaceUnavailable || run.status.message === message)
    )
      return Result.done();
    return this.write(key, run, waitingStatus(run, waiting.reason, message, now));
  }

  private async write(key: string, run: Run, next: NonNullable<Run["status"]>): Promise<Result> {
    if (this.d.writes && !this.d.writes.beginStatusWrite(key)) return Result.done();
    let response: Run | undefined;
    try {
      response = await this.d.writer.patch(run, replaceStatus(fenceOps(run.status), next));
      return Result.done();
    } catch (e) {
      return resultOfWriteError(e);
    } finally {
      this.d.writes?.endStatusWrite(key, response);
    }
  }
}
