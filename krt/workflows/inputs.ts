/**
 * `krt workflow trigger --with k=v`: parses the pairs and checks them against the Workflow's typed
 * inputs (unknown names, missing required ones, number/boolean values), applying defaults — so a
 * mistake is reported by the CLI with the input's name, before a WorkflowRun exists.
 */
import { type InputDeclaration, type InputType, WorkflowLimits } from "@kruntimes/api";
import { WORKFLOW_KEY_PATTERN } from "@kruntimes/api/src/workflow.ts";
import { CliError } from "../errors.ts";

const KEY = new RegExp(WORKFLOW_KEY_PATTERN);
/** The number syntax the CRD accepts for a `number` input's default. */
const NUMBER = /^-?[0-9]+(\.[0-9]+)?$/;

/** `["a=1", "b=x=y"]` → `{a: "1", b: "x=y"}`; the first `=` splits, a name given twice is an error. */
export function parseWithFlags(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    if (eq <= 0)
      throw CliError.usage(`--with "${p}" is not NAME=VALUE`, "e.g. --with version=1.2 --with debug=true");
    const name = p.slice(0, eq);
    if (!KEY.test(name))
      throw CliError.usage(
        `--with "${name}": input names are letters, digits, '_', '.' and '-', starting with a letter or '_'`,
      );
    if (name in out) throw CliError.usage(`--with ${name} is given twice`, "give each input once");
    out[name] = p.slice(eq + 1);
  }
  return out;
}

/** One problem with the given values, for the error message. */
export interface InputProblem {
  input: string;
  problem: string;
}

/**
 * The WorkflowRun's `spec.inputs`: the given values checked against `declared`, with defaults
 * for the ones not given. Every problem is collected, then reported in one error.
 */
export function resolveInputs(
  workflow: string,
  declared: Readonly<Record<string, InputDeclaration>> | undefined,
  given: Readonly<Record<string, string>>,
): Record<string, string> {
  const decls = declared ?? {};
  const problems: InputProblem[] = [];
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const d = decls[name];
    if (!d) {
      problems.push({ input: name, problem: "is not an input of this Workflow" });
      continue;
    }
    const bad = typeProblem(d.type ?? "string", value);
    if (bad) problems.push({ input: name, problem: bad });
    else out[name] = value;
  }
  for (const [name, d] of Object.entries(decls)) {
    if (name in given) continue;
    if (d.default !== undefined) out[name] = d.default;
    else if (d.required) problems.push({ input: name, problem: "is required" });
  }
  if (problems.length > 0) throw inputsError(workflow, decls, problems);
  return out;
}

function typeProblem(type: InputType, value: string): string | undefined {
  if (value.length > WorkflowLimits.valueLength)
    return `is ${value.length} characters long (at most ${WorkflowLimits.valueLength})`;
  if (type === "number" && !NUMBER.test(value)) return `must be a number (e.g. 3, -1, 2.5), got "${value}"`;
  if (type === "boolean" && value !== "true" && value !== "false")
    return `must be true or false, got "${value}"`;
  return undefined;
}

function inputsError(
  workflow: string,
  decls: Readonly<Record<string, InputDeclaration>>,
  problems: readonly InputProblem[],
): CliError {
  const lines = problems.map((p) => `  ${p.input} ${p.problem}`);
  return CliError.usage(
    `the inputs do not fit Workflow "${workflow}":\n${lines.join("\n")}`,
    `its inputs: ${describeInputs(decls)}`,
  );
}

/** `version (string, required), debug (boolean, default false)`, or `none`. */
export function describeInputs(decls: Readonly<Record<string, InputDeclaration>>): string {
  const names = Object.keys(decls).sort();
  if (names.length === 0) return "none (trigger it without --with)";
  return names
    .map((n) => {
      const d = decls[n] as InputDeclaration;
      const how = d.required ? "required" : d.default !== undefined ? `default ${d.default}` : "optional";
      return `${n} (${d.type ?? "string"}, ${how})`;
    })
    .join(", ");
}
