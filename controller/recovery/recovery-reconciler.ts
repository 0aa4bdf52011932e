/**
 * Stale-assignment recovery, keyed by Run: an assigned, unfinished Run whose pod is gone,
 * replaced, terminating, silent (heartbeat stale) or never started it, goes back to Pending with
 * attempt + 1 when its retry policy allows, else ends Failed (Cancelled if it was being
 * cancelled). A session is never re-placed: its workspace and processes lived on that pod, so
 * it ends Failed (Cancelled if Immediate termination was asked) whatever its retry policy.
 * Every write is fenced on phase, attempt and pod UID, like runtimed's.
 */
import {
  canRetry,
  failedVerdict,
  Reason,
  type Run,
  RunMode,
  RunPhase,
  runModeOf,
  TerminationMode,
} from "@kruntimes/api";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import type { SchedulerCache } from "../scheduler/cache/scheduler-cache.ts";
import { holdsCapacity } from "../scheduler/run-request.ts";
import { assignmentFenceOps, replaceStatus } from "../status/json-patch.ts";
import type { RunStatusWriter } from "../status/run-status-writer.ts";
import { resultOfWriteError } from "../status/write-result.ts";
import type { Clock } from "../util/clock.ts";
import { nowMicros } from "../util/clock.ts";
import { type AssessOptions, assess } from "./assess.ts";
import { endedStatus, requeuedStatus } from "./recovery-status.ts";

export interface RecoveryDeps {
  runs: { get(key: string): Run | undefined };
  cache: SchedulerCache;
  writer: RunStatusWriter;
  clock: Clock;
  log: Logger;
  registry: Registry;
  options: AssessOptions;
}

export class RecoveryReconciler implements Reconciler {
  readonly name = "recovery";
  private readonly recovered: Counter<"reason" | "action">;

  constructor(private readonly d: RecoveryDeps) {
    this.recovered = new Counter({
      name: "kruntimes_recovery_total",
      help: "Stale assignments recovered, by reason and action (requeued, failed, cancelled).",
      labelNames: ["reason", "action"],
      registers: [d.registry],
    });
  }

  async reconcile(key: string): Promise<Result> {
    const run = this.d.runs.get(key);
    if (!run || !holdsCapacity(run)) return Result.done();
    const a = run.status?.assignment;
    if (!a) return Result.done();
    const podKey = `${run.metadata.namespace}/${a.pod}`;
    const now = this.d.clock.now();
    const verdict = assess(
      run,
      this.d.cache.pod(podKey),
      this.d.cache.heartbeatOf(podKey),
      now,
      this.d.options,
    );
    if (verdict.kind === "ok") {
      return verdict.recheckInMs === undefined ? Result.done() : Result.requeueAfter(verdict.recheckInMs);
    }
    const attempt = run.status?.attempt ?? a.attempt;
    let action: "requeued" | "failed" | "cancelled";
    let next: NonNullable<Run["status"]>;
    const session = runModeOf(run.spec) === RunMode.Session;
    if (session && run.spec.termination?.mode !== TerminationMode.Immediate) {
      action = "failed";
      next = endedStatus(
        run,
        RunPhase.Failed,
        verdict.reason,
        `${verdict.message}; the session's workspace and processes were on that pod and are lost (a session is never re-placed)`,
        nowMicros(),
      );
    } else if (run.spec.termination?.mode) {
      action = "cancelled";
      next = endedStatus(
        run,
        RunPhase.Cancelled,
        Reason.Cancelled,
        `cancelled; ${verdict.message}`,
        nowMicros(),
      );
    } else if (canRetry(run.spec, attempt, verdict.reason)) {
      action = "requeued";
      next = requeuedStatus(run, verdict.reason, verdict.message, now);
    } else {
      action = "failed";
      const failed = failedVerdict(run.spec, attempt, verdict.reason, verdict.message);
      next = endedStatus(run, RunPhase.Failed, failed.reason, failed.message, nowMicros());
    }
    try {
      await this.d.writer.patch(run, replaceStatus(assignmentFenceOps(run.status ?? {}), next));
    } catch (e) {
      return resultOfWriteError(e);
    }
    this.recovered.inc({ reason: verdict.reason, action });
    this.d.log.info({ run: key, pod: a.pod, attempt, reason: verdict.reason, action }, verdict.message);
    return Result.done();
  }
}
