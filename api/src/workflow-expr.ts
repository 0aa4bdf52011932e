/**
 * Workflow expressions: `${{ <reference> }}` inside a string, replaced by text.
 *
 *   template  = { text | "${{" ws reference ws "}}" | "$${{" }
 *   reference = "inputs." key
 *             | "jobs." name ".outputs." key
 *             | "steps." name ".outputs." key
 *             | "workflow.name" | "workflow.namespace"
 *   name      = [a-z0-9] [-a-z0-9]*           (a job or step name)
 *   key       = [A-Za-z_] [A-Za-z0-9_.-]*     (an input or output name)
 *
 * `$${{` is a literal `${{`. There are no operators or functions: a reference is replaced by its
 * value as text, and a reference to a value that does not exist is an error, never "".
 */

export type Reference =
  | { kind: "inputs"; key: string }
  | { kind: "jobs"; job: string; key: string }
  | { kind: "steps"; step: string; key: string }
  | { kind: "workflow"; key: "name" | "namespace" };

export type Part = string | Reference;

export class ExpressionError extends Error {
  override name = "ExpressionError";
}

const NAME = "[a-z0-9](?:[-a-z0-9]*[a-z0-9])?";
const KEY = "[A-Za-z_][A-Za-z0-9_.-]*";
const REFERENCE = new RegExp(
  `^(?:inputs\\.(${KEY})|jobs\\.(${NAME})\\.outputs\\.(${KEY})|steps\\.(${NAME})\\.outputs\\.(${KEY})|workflow\\.(name|namespace))$`,
);

/** Parses one reference (the text between `${{` and `}}`, trimmed). */
export function parseReference(text: string): Reference {
  const m = REFERENCE.exec(text);
  if (!m) {
    throw new ExpressionError(
      `"${text}" is not a reference: use inputs.<name>, jobs.<job>.outputs.<name>, steps.<step>.outputs.<name>, workflow.name or workflow.namespace`,
    );
  }
  if (m[1] !== undefined) return { kind: "inputs", key: m[1] };
  if (m[2] !== undefined) return { kind: "jobs", job: m[2], key: m[3]! };
  if (m[4] !== undefined) return { kind: "steps", step: m[4], key: m[5]! };
  return { kind: "workflow", key: m[6] as "name" | "namespace" };
}

/** Splits a string into text and references; throws ExpressionError with the position. */
export function parseTemplate(s: string): Part[] {
  const parts: Part[] = [];
  let text = "";
  let i = 0;
  while (i < s.length) {
    if (s.startsWith("$${{", i)) {
      text += "${{";
      i += 4;
      continue;
    }
    if (s.startsWith("${{", i)) {
      const end = s.indexOf("}}", i + 3);
      if (end < 0) throw new ExpressionError(`unclosed "\${{" at character ${i + 1}: close it with "}}"`);
      try {
        const ref = parseReference(s.slice(i + 3, end).trim());
        if (text) parts.push(text);
        text = "";
        parts.push(ref);
      } catch (e) {
        throw new ExpressionError(`at character ${i + 1}: ${(e as Error).message}`);
      }
      i = end + 2;
      continue;
    }
    text += s[i];
    i++;
  }
  if (text) parts.push(text);
  return parts;
}

/** The references a string uses (parse errors thrown). */
export function referencesIn(s: string): Reference[] {
  return parseTemplate(s).filter((p): p is Reference => typeof p !== "string");
}

export function referenceText(r: Reference): string {
  switch (r.kind) {
    case "inputs":
      return `inputs.${r.key}`;
    case "jobs":
      return `jobs.${r.job}.outputs.${r.key}`;
    case "steps":
      return `steps.${r.step}.outputs.${r.key}`;
    case "workflow":
      return `workflow.${r.key}`;
  }
}

/** What a reference may see when it is evaluated. */
export interface Scope {
  inputs?: Record<string, string>;
  jobs?: Record<string, Record<string, string> | undefined>;
  steps?: Record<string, Record<string, string> | undefined>;
  workflow?: { name: string; namespace: string };
}

function lookup(r: Reference, scope: Scope): string {
  const missing = (why: string) => new ExpressionError(`\${{ ${referenceText(r)} }}: ${why}`);
  switch (r.kind) {
    case "inputs": {
      const v = scope.inputs?.[r.key];
      if (v === undefined) throw missing(`no input "${r.key}" was given and it has no default`);
      return v;
    }
    case "jobs": {
      const outputs = scope.jobs?.[r.job];
      if (!outputs) throw missing(`job "${r.job}" has not succeeded (or is not upstream of this one)`);
      const v = outputs[r.key];
      if (v === undefined) throw missing(`job "${r.job}" has no output "${r.key}"`);
      return v;
    }
    case "steps": {
      const outputs = scope.steps?.[r.step];
      if (!outputs) throw missing(`step "${r.step}" has not succeeded (or does not come before this one)`);
      const v = outputs[r.key];
      if (v === undefined) throw missing(`step "${r.step}" wrote no output "${r.key}"`);
      return v;
    }
    case "workflow": {
      if (!scope.workflow) throw missing("not available here");
      return scope.workflow[r.key];
    }
  }
}

/** Replaces every reference in `s` by its value. */
export function evaluate(s: string, scope: Scope): string {
  let out = "";
  for (const p of parseTemplate(s)) out += typeof p === "string" ? p : lookup(p, scope);
  return out;
}

/** Evaluates every value of a map (undefined stays undefined). */
export function evaluateMap(
  m: Record<string, string> | undefined,
  scope: Scope,
): Record<string, string> | undefined {
  if (!m) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) out[k] = evaluate(v, scope);
  return out;
}
