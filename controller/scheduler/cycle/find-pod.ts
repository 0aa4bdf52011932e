/**
 * The scheduling cycle for one Run against its Runtime's pods: PreFilter, Filter every pod,
 * Score the feasible ones, pick the best (ties go to the smallest pod name, so the choice is
 * deterministic). Synchronous and allocation-light: it runs ten thousand times a second.
 */
import { Reason } from "@kruntimes/api";
import type { CycleState } from "../framework/cycle-state.ts";
import type { Framework } from "../framework/registry.ts";
import { Code, rejected, type Status } from "../framework/status.ts";
import type { PodView, RunRequest, RuntimeView } from "../framework/types.ts";

export interface Placement<P extends PodView> {
  readonly pod: P;
  readonly score: number;
  readonly feasible: number;
}

export interface Rejection {
  readonly status: Status;
  /** Pods rejected per plugin status, for metrics and the message. */
  readonly rejections: ReadonlyMap<Status, number>;
}

export type CycleOutcome<P extends PodView> = Placement<P> | Rejection;

export function isPlacement<P extends PodView>(o: CycleOutcome<P>): o is Placement<P> {
  return (o as Placement<P>).pod !== undefined;
}

const NO_RUNTIME = rejected("", Code.Unschedulable, Reason.RuntimeNotFound, "Runtime not found");
const NO_PODS = rejected("", Code.Unschedulable, Reason.NoReadyPods, "Runtime has no pods");
const EMPTY = new Map<Status, number>();

export function findPod<P extends PodView>(
  fw: Framework,
  state: CycleState,
  run: RunRequest,
  runtime: RuntimeView | undefined,
  pods: readonly P[],
  nowMs: number,
): CycleOutcome<P> {
  if (!runtime) return { status: NO_RUNTIME, rejections: EMPTY };
  for (const p of fw.preFilter) {
    const s = p.preFilter(state, run, runtime);
    if (s) return { status: s, rejections: new Map([[s, pods.length]]) };
  }
  if (pods.length === 0) return { status: NO_PODS, rejections: EMPTY };

  let best: P | undefined;
  let bestScore = -1;
  let feasible = 0;
  let rejections: Map<Status, number> | undefined;
  for (const pod of pods) {
    let rejectedBy: Status | undefined;
    for (const f of fw.filter) {
      rejectedBy = f.filter(state, run, pod, nowMs);
      if (rejectedBy) break;
    }
    if (rejectedBy) {
      rejections ??= new Map();
      rejections.set(rejectedBy, (rejections.get(rejectedBy) ?? 0) + 1);
      continue;
    }
    feasible++;
    let score = 0;
    for (const { plugin, weight } of fw.score) score += weight * plugin.score(state, run, pod);
    if (score > bestScore || (score === bestScore && best !== undefined && pod.name < best.name)) {
      best = pod;
      bestScore = score;
    }
  }
  if (best) return { pod: best, score: bestScore, feasible };
  const all = rejections ?? EMPTY;
  return { status: summarize(all, pods.length), rejections: all };
}

/**
 * One status for a Run no pod took: InsufficientCapacity if any pod was only full (a release
 * will help), else NoReadyPods if any pod was unavailable, else the first rejection. The
 * message counts pods per rejection; it names no pods, so it stays bounded.
 */
function summarize(rejections: ReadonlyMap<Status, number>, total: number): Status {
  let pick: Status | undefined;
  const parts: string[] = [];
  for (const [s, n] of rejections) {
    parts.push(`${n} ${s.message}`);
    if (!pick || rank(s) < rank(pick)) pick = s;
  }
  if (!pick) return NO_PODS;
  const message = `0/${total} pods can take the Run: ${parts.sort().join(", ")}`;
  return rejected(pick.plugin, pick.code, pick.reason, message.slice(0, 1024));
}

function rank(s: Status): number {
  if (s.reason === Reason.InsufficientCapacity) return 0;
  if (s.reason === Reason.NoReadyPods) return 1;
  return 2;
}
