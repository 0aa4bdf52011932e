/**
 * A Run's `spec.affinity` compiled once per object (the spec is immutable): selectors ready to
 * match, and a canonical key of the required terms, so the queue can group Runs that are placed
 * under the same constraints.
 */
import type { Affinity, RunAffinityTerm } from "@kruntimes/api";
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

function compile(a: Affinity): CompiledAffinity {
  const req = (terms: readonly RunAffinityTerm[] | undefined) =>
    (terms ?? []).map((t) => ({ selector: compileSelector(t.labelSelector), weight: 1 }));
  const pref = (terms: readonly { weight: number; runAffinityTerm: RunAffinityTerm }[] | undefined) =>
    (terms ?? []).map((t) => ({
      selector: compileSelector(t.runAffinityTerm.labelSelector),
      weight: t.weight,
    }));
  const requiredAffinity = req(a.runAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
  const requiredAnti = req(a.runAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
  const key = (terms: readonly CompiledTerm[]) => terms.map((t) => canonical(t.selector)).join(";");
  const requiredKey =
    requiredAffinity.length + requiredAnti.length ? `a[${key(requiredAffinity)}]n[${key(requiredAnti)}]` : "";
  return {
    requiredAffinity,
    requiredAnti,
    preferredAffinity: pref(a.runAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
    preferredAnti: pref(a.runAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution),
    requiredKey,
  };
}

function canonical(s: Selector): string {
  return s.requirements
    .map((r) => `${r.key} ${r.op} ${[...r.values].sort().join(",")}`)
    .sort()
    .join("&");
}

/** Bit i set when the Run's own labels match required affinity term i (the bootstrap rule needs it). */
export function selfMatchMask(a: CompiledAffinity, labels: Readonly<Record<string, string>>): number {
  let mask = 0;
  a.requiredAffinity.forEach((t, i) => {
    if (matches(t.selector, labels)) mask |= 1 << i;
  });
  return mask;
}
