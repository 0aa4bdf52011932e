/**
 * One interface per extension point. A plugin implements the ones it needs; the framework sorts
 * plugins into extension points by what they implement.
 */
import type { CycleState } from "./cycle-state.ts";
import type { Verdict } from "./status.ts";
import type { PodView, RunRequest, RuntimeView } from "./types.ts";

export interface Plugin {
  readonly name: string;
}

/** Once per cycle, before any pod is looked at: reject a Run no pod of the Runtime could take. */
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, run: RunRequest, runtime: RuntimeView): Verdict;
}

/**
 * Per pod: can this pod take the Run now? The queue also runs PreFilter and Filter for a single
 * pod, with a fresh CycleState, when that pod frees capacity: it wakes only Runs the pod can take.
 */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, run: RunRequest, pod: PodView, nowMs: number): Verdict;
}

/** Per feasible pod: 0 (worst) to 100 (best). */
export interface ScorePlugin extends Plugin {
  /** Once per cycle before scoring: false when the plugin has nothing to say about this Run (skipped). */
  preScore?(state: CycleState, run: RunRequest): boolean;
  /** The raw score; with `normalizeScore`, any number (it is rescaled across the feasible pods). */
  score(state: CycleState, run: RunRequest, pod: PodView): number;
  /** Rescales the raw scores of all feasible pods (in place) to 0–100. */
  normalizeScore?(state: CycleState, run: RunRequest, scores: number[]): void;
}

/** After a pod is chosen and the Run assumed on it; `unreserve` undoes it if binding fails. */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, run: RunRequest, pod: PodView): Verdict;
  unreserve(run: RunRequest, pod: PodView): void;
}

export const MAX_SCORE = 100;

export function isPreFilter(p: Plugin): p is PreFilterPlugin {
  return typeof (p as PreFilterPlugin).preFilter === "function";
}
export function isFilter(p: Plugin): p is FilterPlugin {
  return typeof (p as FilterPlugin).filter === "function";
}
export function isScore(p: Plugin): p is ScorePlugin {
  return typeof (p as ScorePlugin).score === "function";
}
export function isReserve(p: Plugin): p is ReservePlugin {
  return typeof (p as ReservePlugin).reserve === "function";
}
