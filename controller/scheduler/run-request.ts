/** A Run's scheduling-relevant facts, read once from the object. */
import { Priority, type Run, RunMode, RunPhase, runModeOf, runRequests } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { RunRequest } from "./framework/types.ts";

/** Phases in which a Run holds capacity on its assigned pod. */
export const HOLDING_PHASES: ReadonlySet<string> = new Set([
  RunPhase.Scheduled,
  RunPhase.Running,
  RunPhase.Ready,
  RunPhase.Finalizing,
]);

export interface ParsedRequest extends RunRequest {
  /** Canonical text of the request (`runs=1`), to group Runs of the same shape. */
  readonly shape: string;
}

export function runtimeKeyOf(run: Run): string {
  return `${run.metadata.namespace ?? ""}/${run.spec.runtime}`;
}

export function requestOf(run: Run): ParsedRequest {
  const req = runRequests(run.spec);
  const names = Object.keys(req).sort();
  const amounts = names.map((n) => req[n] as number);
  const exclusive = runModeOf(run.spec) === RunMode.Session;
  return {
    key: keyOf(run),
    runtimeKey: runtimeKeyOf(run),
    names,
    amounts,
    shape: names.map((n, i) => `${n}=${amounts[i]}`).join(",") + (exclusive ? ",exclusive" : ""),
    ...(exclusive ? { exclusive } : {}),
    namespace: run.metadata.namespace ?? "",
    labels: run.metadata.labels ?? {},
    priority: run.spec.priority ?? Priority.default,
    ...(run.spec.affinity ? { affinity: run.spec.affinity } : {}),
    ...(run.spec.workspace ? { workspace: run.spec.workspace.name } : {}),
  };
}

/** Pending = no phase yet (never written) or phase Pending. */
export function isPending(run: Run): boolean {
  const phase = run.status?.phase;
  return phase === undefined || phase === RunPhase.Pending;
}

export function holdsCapacity(run: Run): boolean {
  const phase = run.status?.phase;
  return phase !== undefined && HOLDING_PHASES.has(phase) && run.status?.assignment !== undefined;
}

/** A session Run that ended on its pod: that pod incarnation is spent (replaced, never reused). */
export function spentPodOf(run: Run): { pod: string; podUID: string } | undefined {
  const a = run.status?.assignment;
  if (!a || runModeOf(run.spec) !== RunMode.Session) return undefined;
  const phase = run.status?.phase;
  if (phase === undefined || phase === RunPhase.Pending || HOLDING_PHASES.has(phase)) return undefined;
  return { pod: a.pod, podUID: a.podUID };
}
