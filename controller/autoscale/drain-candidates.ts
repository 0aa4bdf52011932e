/**
 * Which pods a scale-down drains: never one holding a bound PersistentWorkspace (its directory
 * lives on that pod: removing it would turn the workspace Lost, idle or not) nor a session's
 * pod (the spent-pod reconciler replaces those). Among the rest: pods that are not serving yet
 * first, then the emptiest (fewest Runs: the shortest drain), then the youngest.
 */
import type { PodInfo } from "../scheduler/cache/pod-info.ts";

export interface CandidateFacts {
  /** Workspaces bound to the pod. */
  boundWorkspaces(podKey: string): number;
  /** Recently given back after a drain timeout: leave it alone for now. */
  resting(pod: PodInfo): boolean;
}

export function drainCandidates(
  pods: readonly PodInfo[],
  count: number,
  facts: CandidateFacts,
  nowMs: number,
): PodInfo[] {
  if (count <= 0) return [];
  const eligible = pods.filter(
    (p) =>
      !p.terminating && !p.draining && !p.sealed && facts.boundWorkspaces(p.key) === 0 && !facts.resting(p),
  );
  const rank = (p: PodInfo) => (p.isAvailable(nowMs) ? 1 : 0);
  eligible.sort(
    (a, b) => rank(a) - rank(b) || a.usage.runs.size - b.usage.runs.size || (a.name < b.name ? 1 : -1),
  );
  return eligible.slice(0, count);
}
