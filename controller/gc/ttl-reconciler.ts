/**
 * TTL garbage collection, keyed by Run: a finished Run with `ttlSecondsAfterFinished` is deleted
 * that long after it finished. The wait is the work queue's delayed add (one heap, one timer for
 * all Runs) — no periodic list scan. The delete carries a UID precondition, so a new Run that
 * reuses the name is never deleted by an old timer.
 */
import { isTerminalPhase, type Run, RunResource } from "@kruntimes/api";
import { isConflict, isNotFound, type KubeClient, path } from "@kruntimes/kube";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import type { Clock } from "../util/clock.ts";

export interface TtlDeps {
  runs: { get(key: string): Run | undefined };
  client: KubeClient;
  clock: Clock;
  registry: Registry;
}

/** When the Run finished: runtimed's or the controller's timing, else when we first saw it finished. */
function finishedMs(run: Run): number | undefined {
  const t = run.status?.timing;
  const micros = t?.finishedMicros ?? t?.reportedMicros;
  return micros === undefined ? undefined : micros / 1000;
}

export class TtlReconciler implements Reconciler {
  readonly name = "ttl-gc";
  private readonly firstSeen = new Map<string, number>();
  private readonly deleted: Counter<string>;

  constructor(private readonly d: TtlDeps) {
    this.deleted = new Counter({
      name: "kruntimes_ttl_deleted_total",
      help: "Finished Runs deleted after ttlSecondsAfterFinished.",
      registers: [d.registry],
    });
  }

  /** Whether the Run needs this reconciler at all (to filter informer events). */
  static wants(run: Run): boolean {
    return run.spec.ttlSecondsAfterFinished !== undefined && isTerminalPhase(run.status?.phase);
  }

  async reconcile(key: string): Promise<Result> {
    const run = this.d.runs.get(key);
    if (!run || !TtlReconciler.wants(run) || run.metadata.deletionTimestamp) {
      this.firstSeen.delete(key);
      return Result.done();
    }
    const now = this.d.clock.now();
    let finished = finishedMs(run);
    if (finished === undefined) {
      finished = this.firstSeen.get(key) ?? now;
      this.firstSeen.set(key, finished);
    }
    const due = finished + (run.spec.ttlSecondsAfterFinished ?? 0) * 1000;
    if (now < due) return Result.requeueAfter(due - now);
    try {
      await this.d.client.delete(path(RunResource, run.metadata.namespace, run.metadata.name), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        preconditions: { uid: run.metadata.uid },
        propagationPolicy: "Background",
      });
      this.deleted.inc();
    } catch (e) {
      // Gone already, or the name now belongs to a different Run (UID precondition failed).
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    this.firstSeen.delete(key);
    return Result.done();
  }
}
