/**
 * `krt workflow trigger --with k=v`: parses the pairs and checks them against the Workflow's typed
 * inputs (the API's bindInputs: unknown names, missing required ones, number/boolean values),
 * applying defaults — so a mistake is reported by the CLI, before a WorkflowRun exists.
 */
import { bindInputs, type InputDeclaration, WorkflowInvalid } from "@kruntimes/api";
import { WORKFLOW_KEY_PATTERN } from "@kruntimes/api/src/workflow.ts";
import { CliError } from "../errors.ts";

const KEY = new RegExp(WORKFLOW_KEY_PATTERN);

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

/**
 * The WorkflowRun's `spec.inputs`: the given values checked against `declared` with the API's own
 * rules (bindInputs: unknown names, missing required ones, number/boolean syntax), defaults
 * filled in. Every problem is reported in one usage error whose hint lists the known inputs.
 */
export function resolveInputs(
  workflow: string,
  declared: Readonly<Record<string, InputDeclaration>> | undefined,
  given: Readonly<Record<string, string>>,
): Record<string, string> {
  const decls = declared ?? {};
  try {
    return bindInputs({ ...given }, { ...decls }, `Workflow "${workflow}"`, "--with");
  } catch (e) {
    if (!(e instanceof WorkflowInvalid)) throw e;
    const lines = e.issues.map((i) =>
      i.path.startsWith("--with.") ? `  --with ${i.path.slice(7)}: ${i.message}` : `  ${i.message}`,
    );
    throw CliError.usage(
      `the inputs do not fit Workflow "${workflow}":\n${lines.join("\n")}`,
      `its inputs: ${describeInputs(decls)}`,
    );
  }
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
