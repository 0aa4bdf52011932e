/**
 * Run affinity, as pod affinity is to nodes, with the Runtime pod as the topology domain
 * (`kruntimes.io/runtime-pod`) and the Run's namespace as the scope.
 *
 * PreFilter reads the placement snapshot once per cycle (placed Runs, confirmed and assumed):
 * per term, how many matching Runs each pod holds. Filter then checks each pod in O(terms):
 * - required runAffinity: every term has a matching Run on the pod (never the Run itself).
 *   Bootstrap: a term no placed Run of the namespace matches is met on every pod by a Run that
 *   matches it itself (the first of a cohort seeds it); otherwise the Run waits.
 * - required runAntiAffinity: no term has a matching Run on the pod;
 * - symmetry: no Run on the pod has required anti-affinity that matches this Run's labels.
 * Score (preferred terms): the sum of weight × matching Runs on the pod (anti-affinity
 * subtracts), rescaled 0–100 across the feasible pods as kube-scheduler's InterPodAffinity does.
 */
import { Reason } from "@kruntimes/api";
import { type CompiledAffinity, type CompiledTerm, compiledAffinity } from "../../cache/affinity-terms.ts";
import { matches, type Selector } from "../../cache/label-selector.ts";
import { domainOf } from "../../cache/placement-index.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import {
  type FilterPlugin,
  MAX_SCORE,
  type PreFilterPlugin,
  type ScorePlugin,
} from "../../framework/plugin.ts";
import { Code, rejected, type Status, type Verdict } from "../../framework/status.ts";
import type { PodView, RunRequest } from "../../framework/types.ts";

export const NAME = "run-affinity";

/** What PreFilter found for one cycle. `undefined` per required term: met on every pod (bootstrap). */
interface Prepared {
  readonly affinity: CompiledAffinity | undefined;
  readonly required: (ReadonlyMap<string, number> | undefined)[];
  readonly requiredStatus: Status[];
  readonly anti: ReadonlyMap<string, number>[];
  readonly antiStatus: Status[];
  /** Some placed Run of the namespace has required anti-affinity (symmetry applies). */
  readonly refusers: boolean;
  /**
   * Pods whose Runs refuse this Run, built on the second Filter call: a one-pod check (the
   * queue's wake check) asks that pod's Runs instead, a cycle over many pods builds it once.
   */
  refusing: ReadonlySet<string> | undefined;
  filtered: number;
  readonly preferred: ReadonlyMap<string, number>[];
  readonly preferredWeights: number[];
}

const REFUSED = rejected(
  NAME,
  Code.Unschedulable,
  Reason.Unschedulable,
  "refused by a Run's runAntiAffinity",
  "waiting for a pod whose Runs' runAntiAffinity does not refuse this Run",
);

const NONE: ReadonlySet<string> = new Set();

/**
 * Statuses are made once per compiled selector (shared by the Runs that repeat it), so the
 * cycle's per-pod path allocates nothing and equal terms count as one cause in the message.
 */
const requiredStatus = new WeakMap<Selector, Status>();
const antiStatus = new WeakMap<Selector, Status>();
const noneYetStatus = new WeakMap<Selector, Status>();

function statusOf(cache: WeakMap<Selector, Status>, t: CompiledTerm, make: (text: string) => Status): Status {
  let s = cache.get(t.selector);
  if (!s) {
    s = make(t.selector.text);
    cache.set(t.selector, s);
  }
  return s;
}

const missing = (t: CompiledTerm) =>
  statusOf(requiredStatus, t, (text) =>
    rejected(
      NAME,
      Code.Unschedulable,
      Reason.Unschedulable,
      `without a Run matching ${text}`,
      `waiting for a Run matching ${text} on the same pod`,
    ),
  );
const noneYet = (t: CompiledTerm) =>
  statusOf(noneYetStatus, t, (text) =>
    rejected(
      NAME,
      Code.Unschedulable,
      Reason.Unschedulable,
      `waiting for a Run matching ${text} on the same pod (none is placed in the namespace, and this Run does not match the selector itself, so it cannot start the group)`,
    ),
  );
const present = (t: CompiledTerm) =>
  statusOf(antiStatus, t, (text) =>
    rejected(
      NAME,
      Code.Unschedulable,
      Reason.Unschedulable,
      `with a Run matching ${text} (runAntiAffinity)`,
      `waiting for a pod without a Run matching ${text}`,
    ),
  );

export class RunAffinity implements PreFilterPlugin, FilterPlugin, ScorePlugin {
  readonly name = NAME;
  /** The cycle PreFilter prepared: its CycleState and Run (identity), and what it found. */
  private forState: CycleState | undefined;
  private forRun: RunRequest | undefined;
  private prepared: Prepared | undefined;

  preFilter(state: CycleState, run: RunRequest): Verdict {
    this.forState = state;
    this.forRun = run;
    this.prepared = undefined;
    const view = state.placements;
    const affinity = compiledAffinity(run.affinity);
    const refusers = view.hasRefusers(run.namespace);
    if (!affinity && !refusers) return undefined;
    const required: (ReadonlyMap<string, number> | undefined)[] = [];
    const requiredStatus: Status[] = [];
    const anti: ReadonlyMap<string, number>[] = [];
    const antiStatus: Status[] = [];
    const preferred: ReadonlyMap<string, number>[] = [];
    const preferredWeights: number[] = [];
    if (affinity) {
      // The term met on fewest pods limits the cycle to those pods.
      let narrowest: ReadonlyMap<string, number> | undefined;
      let narrowestStatus: Status | undefined;
      for (const t of affinity.requiredAffinity) {
        const counts = view.countsOn(run.namespace, t.selector, run.key);
        if (counts.size > 0) {
          required.push(counts);
          requiredStatus.push(missing(t));
          if (!narrowest || counts.size < narrowest.size) {
            narrowest = counts;
            narrowestStatus = missing(t);
          }
        } else if (matches(t.selector, run.labels)) {
          required.push(undefined);
          requiredStatus.push(missing(t));
        } else return noneYet(t);
      }
      if (narrowest && narrowestStatus) state.narrow(narrowest, narrowestStatus);
      for (const t of affinity.requiredAnti) {
        anti.push(view.countsOn(run.namespace, t.selector, run.key));
        antiStatus.push(present(t));
      }
      for (const t of affinity.preferredAffinity) {
        preferred.push(view.countsOn(run.namespace, t.selector, run.key));
        preferredWeights.push(t.weight);
      }
      for (const t of affinity.preferredAnti) {
        preferred.push(view.countsOn(run.namespace, t.selector, run.key));
        preferredWeights.push(-t.weight);
      }
    }
    this.prepared = {
      affinity,
      required,
      requiredStatus,
      anti,
      antiStatus,
      refusers,
      refusing: undefined,
      filtered: 0,
      preferred,
      preferredWeights,
    };
    return undefined;
  }

  filter(state: CycleState, run: RunRequest, pod: PodView): Verdict {
    // Called without this cycle's PreFilter (a caller that filters directly): prepare now.
    if (this.forState !== state || this.forRun !== run) {
      const s = this.preFilter(state, run);
      if (s) return s;
    }
    const p = this.prepared;
    if (!p) return undefined;
    const domain = pod.domain ?? domainOf(pod.key, pod.uid);
    // Its own terms first: they name what the Run itself asked for.
    for (let i = 0; i < p.anti.length; i++) {
      if ((p.anti[i] as ReadonlyMap<string, number>).has(domain)) return p.antiStatus[i];
    }
    if (p.refusers && this.refused(state, run, p, domain)) return REFUSED;
    for (let i = 0; i < p.required.length; i++) {
      const counts = p.required[i];
      if (counts && !counts.has(domain)) return p.requiredStatus[i];
    }
    return undefined;
  }

  private refused(state: CycleState, run: RunRequest, p: Prepared, domain: string): boolean {
    if (p.filtered++ === 0) return state.placements.refusesOn(domain, run.labels, run.key);
    p.refusing ??= state.placements.refusing(run.namespace, run.labels, run.key) ?? NONE;
    return p.refusing.has(domain);
  }

  preScore(state: CycleState, run: RunRequest): boolean {
    return this.forState === state && this.forRun === run && (this.prepared?.preferred.length ?? 0) > 0;
  }

  score(_state: CycleState, _run: RunRequest, pod: PodView): number {
    const p = this.prepared;
    if (!p) return 0;
    const domain = pod.domain ?? domainOf(pod.key, pod.uid);
    let sum = 0;
    for (let i = 0; i < p.preferred.length; i++) {
      sum +=
        (p.preferredWeights[i] as number) *
        ((p.preferred[i] as ReadonlyMap<string, number>).get(domain) ?? 0);
    }
    return sum;
  }

  /** kube-scheduler's InterPodAffinity rescaling: (score − min) / (max − min) × 100, with 0 in range. */
  normalizeScore(_state: CycleState, _run: RunRequest, scores: number[]): void {
    let max = 0;
    let min = 0;
    for (const s of scores) {
      if (s > max) max = s;
      if (s < min) min = s;
    }
    const diff = max - min;
    for (let i = 0; i < scores.length; i++) {
      scores[i] = diff > 0 ? Math.floor((MAX_SCORE * ((scores[i] as number) - min)) / diff) : 0;
    }
  }
}

export function New(args: unknown): RunAffinity {
  if (args !== undefined && args !== null && Object.keys(args as object).length > 0) {
    throw new Error(`${NAME} takes no args`);
  }
  return new RunAffinity();
}
