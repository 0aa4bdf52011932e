/**
 * metav1.LabelSelector compiled once into requirements, with what an index needs to find
 * matching Runs without looking at every Run: the label postings ("k=v", or "k" for Exists) of
 * which a matching Run must carry at least one, per positive requirement.
 */
import type { LabelSelector } from "@kruntimes/api";

export type Labels = Readonly<Record<string, string>>;

export type Operator = "In" | "NotIn" | "Exists" | "DoesNotExist";

export interface Requirement {
  readonly key: string;
  readonly op: Operator;
  readonly values: ReadonlySet<string>;
}

export interface Selector {
  readonly requirements: readonly Requirement[];
  /**
   * Per positive requirement (In, Exists): the postings a matching Run carries one of. Empty
   * when the selector has only NotIn/DoesNotExist: then every Run has to be looked at.
   */
  readonly postings: readonly (readonly string[])[];
  /** The posting when the selector is exactly one label (or one Exists): counts per pod are kept for it. */
  readonly simple?: string;
  /** kubectl-style text (`job=a,tier in (x,y)`), bounded, for messages. */
  readonly text: string;
}

/** Longest selector text put in a message (a selector may list many values). */
const TEXT_MAX = 120;

/** The posting of a label pair; keys cannot contain "=", so it is unambiguous. */
export function labelPosting(key: string, value: string): string {
  return `${key}=${value}`;
}

export function compileSelector(s: LabelSelector): Selector {
  const reqs: Requirement[] = [];
  for (const key of Object.keys(s.matchLabels ?? {}).sort()) {
    reqs.push({ key, op: "In", values: new Set([(s.matchLabels as Record<string, string>)[key] as string]) });
  }
  for (const e of s.matchExpressions ?? []) {
    reqs.push({ key: e.key, op: e.operator, values: new Set(e.values ?? []) });
  }
  const postings: string[][] = [];
  for (const r of reqs) {
    if (r.op === "In") postings.push([...r.values].sort().map((v) => labelPosting(r.key, v)));
    else if (r.op === "Exists") postings.push([r.key]);
  }
  const only = reqs.length === 1 ? reqs[0] : undefined;
  const simple =
    only && ((only.op === "In" && only.values.size === 1) || only.op === "Exists")
      ? postings[0]?.[0]
      : undefined;
  return { requirements: reqs, postings, ...(simple ? { simple } : {}), text: selectorText(reqs) };
}

export function matches(sel: Selector, labels: Labels): boolean {
  for (const r of sel.requirements) {
    const v = labels[r.key];
    switch (r.op) {
      case "In":
        if (v === undefined || !r.values.has(v)) return false;
        break;
      case "NotIn":
        if (v !== undefined && r.values.has(v)) return false;
        break;
      case "Exists":
        if (v === undefined) return false;
        break;
      case "DoesNotExist":
        if (v !== undefined) return false;
        break;
    }
  }
  return true;
}

function selectorText(reqs: readonly Requirement[]): string {
  const parts = reqs.map((r) => {
    const values = [...r.values].sort();
    switch (r.op) {
      case "In":
        return values.length === 1 ? `${r.key}=${values[0]}` : `${r.key} in (${values.join(",")})`;
      case "NotIn":
        return `${r.key} notin (${values.join(",")})`;
      case "Exists":
        return r.key;
      case "DoesNotExist":
        return `!${r.key}`;
    }
    return r.key;
  });
  const text = parts.join(",");
  return text.length > TEXT_MAX ? `${text.slice(0, TEXT_MAX - 1)}…` : text;
}

export function sameLabels(a: Labels, b: Labels): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}
