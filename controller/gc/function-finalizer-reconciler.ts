/**
 * The safety net of the `kruntimes.io/function` finalizer, keyed by Run. runtimed removes it
 * itself once it has unregistered the function (after its terminal write, or on deletion); this
 * reconciler removes it only where no runtimed can: a finished Run still carrying it after a grace
 * period (runtimed died between its terminal write and the removal, or the controller ended the
 * Run after its pod was lost), and a deleted Run that holds no pod (re-queued after a pod loss,
 * so no registration exists anywhere). The patch tests the Run's UID and the entry it removes.
 */
import { FUNCTION_FINALIZER, isTerminalPhase, type Run, RunResource } from "@kruntimes/api";
import { isConflict, isNotFound, type KubeClient, KubeError, path } from "@kruntimes/kube";
import { Counter, type Registry } from "prom-client";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import { holdsCapacity } from "../scheduler/run-request.ts";
import type { Clock } from "../util/clock.ts";

export interface FunctionFinalizerDeps {
  runs: { get(key: string): Run | undefined };
  client: KubeClient;
  clock: Clock;
  registry: Registry;
  /** How long runtimed gets to remove the finalizer of a finished Run itself. */
  graceMs: number;
}

export type FinalizerVerdict = { kind: "keep" } | { kind: "remove" } | { kind: "wait"; ms: number };

export function finalizerVerdict(run: Run, nowMs: number, graceMs: number): FinalizerVerdict {
  if (!run.metadata.finalizers?.includes(FUNCTION_FINALIZER)) return { kind: "keep" };
  if (run.metadata.deletionTimestamp && !holdsCapacity(run)) return { kind: "remove" };
  if (!isTerminalPhase(run.status?.phase)) return { kind: "keep" };
  const t = run.status?.timing;
  const endedMs = (t?.reportedMicros ?? t?.finishedMicros ?? 0) / 1000;
  const due = endedMs + graceMs;
  return nowMs >= due ? { kind: "remove" } : { kind: "wait", ms: due - nowMs };
}

export class FunctionFinalizerReconciler implements Reconciler {
  readonly name = "function-finalizer";
  private readonly removed: Counter<string>;

  constructor(private readonly d: FunctionFinalizerDeps) {
    this.removed = new Counter({
      name: "kruntimes_function_finalizers_removed_total",
      help: "Function finalizers the controller removed because no runtimed could (finished or re-queued Runs).",
      registers: [d.registry],
    });
  }

  static wants(run: Run): boolean {
    return run.metadata.finalizers?.includes(FUNCTION_FINALIZER) ?? false;
  }

  async reconcile(key: string): Promise<Result> {
    const run = this.d.runs.get(key);
    if (!run) return Result.done();
    const v = finalizerVerdict(run, this.d.clock.now(), this.d.graceMs);
    if (v.kind === "keep") return Result.done();
    if (v.kind === "wait") return Result.requeueAfter(v.ms);
    const i = run.metadata.finalizers?.indexOf(FUNCTION_FINALIZER) ?? -1;
    try {
      await this.d.client.patch(
        path(RunResource, run.metadata.namespace, run.metadata.name),
        [
          { op: "test", path: "/metadata/uid", value: run.metadata.uid },
          { op: "test", path: `/metadata/finalizers/${i}`, value: FUNCTION_FINALIZER },
          { op: "remove", path: `/metadata/finalizers/${i}` },
        ],
        "json",
      );
      this.removed.inc();
    } catch (e) {
      // Gone, or the list changed (runtimed removed it first): the next event decides again.
      if (!isNotFound(e) && !isConflict(e) && !(e instanceof KubeError && e.code === 422)) throw e;
    }
    return Result.done();
  }
}
