/**
 * Score: prefer the pod with the most capacity left after placing the Run, as a share of its
 * capacity (kube-scheduler's LeastAllocated), averaged over the requested resources with
 * optional per-resource weights. Spreads Runs across warm pods.
 */
import type { CycleState } from "../../framework/cycle-state.ts";
import { MAX_SCORE, type ScorePlugin } from "../../framework/plugin.ts";
import type { PodView, RunRequest } from "../../framework/types.ts";

export const NAME = "least-loaded";

export interface LeastLoadedArgs {
  /** Resource name → weight. Resources not listed weigh 1. */
  weights?: Record<string, number>;
}

export class LeastLoaded implements ScorePlugin {
  readonly name = NAME;

  constructor(private readonly weights: Readonly<Record<string, number>> = {}) {}

  score(_state: CycleState, run: RunRequest, pod: PodView): number {
    let sum = 0;
    let weightSum = 0;
    for (let i = 0; i < run.names.length; i++) {
      const name = run.names[i] as string;
      const capacity = pod.capacity[name] ?? 0;
      if (capacity <= 0) continue;
      const weight = this.weights[name] ?? 1;
      const left = capacity - (pod.used[name] ?? 0) - (run.amounts[i] as number);
      sum += weight * Math.max(0, left / capacity);
      weightSum += weight;
    }
    return weightSum === 0 ? 0 : Math.floor((MAX_SCORE * sum) / weightSum);
  }
}

export function New(args: unknown): LeastLoaded {
  if (args === undefined || args === null) return new LeastLoaded();
  const weights = (args as LeastLoadedArgs).weights ?? {};
  for (const [name, w] of Object.entries(weights)) {
    if (typeof w !== "number" || !(w > 0)) throw new Error(`${NAME}: weight of "${name}" must be > 0`);
  }
  return new LeastLoaded(weights);
}
