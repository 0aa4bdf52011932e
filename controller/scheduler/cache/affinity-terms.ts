/**
 * A Run's `spec.affinity` compiled once per object (the spec is immutable): selectors ready to
 * match, and a canonical key of the required terms, so the queue can group Runs that are placed
 * under the same constraints.
 */
import type { Affinity, LabelSelector, RunAffinityTerm } from "@kruntimes/api";
import { compileSelector, matches, type Selector } from "./label-selector.ts";

export interface CompiledTerm {
  readonly selector: Selector;
  /** 1–100 for preferred terms; 1 for required ones. */
  readonly weight: number;
}

export interface CompiledAffinity {
  readonly requiredAffinity: readonly CompiledTerm[];
  readonly requiredAnti: readonly CompiledTerm[];
  readonly preferredAffinity: readonly CompiledTerm[];
  readonly preferredAnti: readonly CompiledTerm[];
  /** Canonical text of the required terms; "" when there are none. */
  readonly requiredKey: string;
}

const cache = new WeakMap<Affinity, CompiledAffinity>();

/** Compiled terms of `affinity`, memoised on the object; undefined when it says nothing. */
export function compiledAffinity(affinity: Affinity | undefined): CompiledAffinity | undefined {
  if (!affinity) return undefined;
  let c = cache.get(affinity);
  if (!c) {
    c = compile(affinity);
    cache.set(affinity, c);
  }
  return c.requiredAffinity.length +
    c.requiredAnti.length +
    c.preferredAffinity.length +
    c.preferredAnti.length
    ? c
    : undefined;
}

/**
 * Compiled selectors by their JSON: Runs of one cohort or job repeat the same selectors, so each
 * is compiled once. Bounded: past SELECTORS_MAX distinct selectors the cache starts over.
 */
const selectors = new Map<string, Selector>();
const SELECTORS_MAX = 4096;

function selectorOf(s: LabelSelector, json: string): Selector {
  let c = selectors.get(json);
  if (!c) {
    if (selectors.size >= SELECTORS_MAX) selectors.clear();
    c = compileSelector(s);
    selectors.set(json, c);
  }
  return c;
}

function compile(a: Affinity): CompiledAffinity {
  const keys: string[] = [];
  const req = (terms: readonly RunAffinityTerm[] | undefined, key: boolean) =>
    (terms ?? []).map((t) => {
      const json = JSON.stringify(t.labelSelector);
      if (key) keys.push(json);
      return { selector: selectorOf(t.labelSelector, json), weight: 1 };
    });
  const pref = (terms: readonly { weight: number; runAffinityTerm: RunAffinityTerm }[] | undefined) =>
    (terms ?? []).map((t) => ({
      selector: selectorOf(t.runAffinityTerm.labelSelector, JSON.stringify(t.runAffinityTerm.labelSelector)),
      weight: t.weight,
    }));
  const requiredAffinity = req(a.runAffinity?.requiredDuringSchedulingIgnoredDuringExecution, true);
  keys.push("|");
  const requiredAnti = req(a.runAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution, true);
  return {
    requiredAffinity,
    requiredAnti,
    preferredAffinity: pref(a.runAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
    preferredAnti: pref(a.runAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
    requiredKey: requiredAffinity.length + requiredAnti.length ? keys.join(";") : "",
  };
}

/** Bit i set when the Run's own labels match required affinity term i (the bootstrap rule needs it). */
export function selfMatchMask(a: CompiledAffinity, labels: Readonly<Record<string, string>>): number {
  let mask = 0;
  a.requiredAffinity.forEach((t, i) => {
    if (matches(t.selector, labels)) mask |= 1 << i;
  });
  return mask;
}
