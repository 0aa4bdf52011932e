/**
 * Turns `krt run` flags into a task or function Run, checking the flag combinations the API would
 * reject (so the user hears it from the CLI, with the flag names) and the ones only the CLI has.
 */
import {
  Annotations,
  API_VERSION,
  type ArtifactInput,
  isDuration,
  Limits,
  parseApiDuration,
  RUN_KIND,
  type Run,
  type RunSpec,
} from "@kruntimes/api";
import { CliError } from "../errors.ts";
import { type FunctionFlags, functionFlagsGiven, functionMode } from "./function-flags.ts";

export interface RunFlags {
  runtime?: string;
  /** Positional arguments after `--`. */
  args: string[];
  /** The `--file` path as given (`-` is stdin); `script` carries its contents. */
  file?: string;
  script?: string;
  entrypoint?: string;
  env: string[];
  timeout?: string;
  retries?: string;
  ttl?: string;
  name?: string;
  /** `--artifact-input RUN/NAME[:PATH]` (repeatable): tasks only. */
  artifactInputs?: string[];
  /** `--function`: a function Run serving `spec.source.inline`'s handler (flags in FunctionFlags). */
  function?: FunctionFlags;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Checks flag combinations before any file is read or request sent. */
export function checkRunFlags(f: RunFlags): void {
  if (!f.runtime) throw CliError.usage("--runtime is required", "list the Runtimes with `krt runtime list`");
  if (f.function) {
    checkFunctionFlags(f);
    return;
  }
  if (f.file !== undefined && f.entrypoint !== undefined)
    throw CliError.usage(
      "--file and --entrypoint exclude each other: --file sends a standalone inline script, --entrypoint names a script file in the runtime container",
      "pass values to an inline script with --env, or drop --file and name the script with --entrypoint",
    );
  if (f.file !== undefined && f.args.length > 0)
    throw CliError.usage(
      `--file takes no arguments after --, got: ${f.args.join(" ")}`,
      "pass values to an inline script with --env K=V",
    );
  if (f.file === undefined && f.entrypoint === undefined && f.args.length === 0)
    throw CliError.usage(
      "nothing to run: give --file <script> (or - for stdin), --entrypoint <path> [-- args…], or -- <shell command>…",
      "e.g. krt run --runtime bash -- 'echo hello'",
    );
  if (f.name !== undefined && !NAME.test(f.name))
    throw CliError.usage(`--name "${f.name}" is not a valid name: lower-case letters, digits, '-' and '.'`);
  if (f.timeout !== undefined && !isDuration(f.timeout))
    throw CliError.usage(`--timeout "${f.timeout}" is not a duration`, "e.g. --timeout 30s, 5m, 1h30m");
  if (f.retries !== undefined) retriesOf(f.retries);
  if (f.ttl !== undefined) ttlSecondsOf(f.ttl);
  for (const e of f.env) envOf(e);
  artifactInputsOf(f.artifactInputs ?? []);
}

/** Function mode: the source comes from --file, task-only flags are refused. */
function checkFunctionFlags(f: RunFlags): void {
  if (f.entrypoint !== undefined)
    throw CliError.usage(
      "--entrypoint is for tasks: a function's handler is defined in the --file source",
      "e.g. krt run --function --runtime python --handler handler --file handler.py",
    );
  if (f.args.length > 0)
    throw CliError.usage(
      `--function takes no arguments after --, got: ${f.args.join(" ")}`,
      "configure the function with --env K=V; callers send the input with `krt invoke`",
    );
  if (f.artifactInputs?.length)
    throw CliError.usage(
      "--artifact-input is for tasks: a function or session takes no staged artifacts",
      "drop --function, or let the function read what it needs",
    );
  if (f.file === undefined)
    throw CliError.usage(
      "--function needs --file: the module (python) or script (bash) that defines the handler",
      "e.g. krt run --function --runtime python --handler handler --file handler.py",
    );
  if (f.retries !== undefined) retriesOf(f.retries);
  if (f.ttl !== undefined) ttlSecondsOf(f.ttl);
  if (f.name !== undefined && !NAME.test(f.name))
    throw CliError.usage(`--name "${f.name}" is not a valid name: lower-case letters, digits, '-' and '.'`);
  if (f.timeout !== undefined && !isDuration(f.timeout))
    throw CliError.usage(
      `--timeout "${f.timeout}" is not a duration`,
      "e.g. --timeout 1h (a function's whole lifetime)",
    );
  for (const e of f.env) envOf(e);
  functionMode(f.function as FunctionFlags);
}

/** Function flags without --function are a mistake, not something to ignore. */
export function checkNoFunctionFlags(f: FunctionFlags): void {
  const given = functionFlagsGiven(f);
  if (given.length > 0)
    throw CliError.usage(
      `${given.join(", ")} ${given.length > 1 ? "are" : "is"} for function Runs: add --function`,
    );
}

/** Characters a word may hold and still be passed to a shell unquoted. */
const SHELL_SAFE = /^[A-Za-z0-9_./=:,@%+-]+$/;

/**
 * The words after `--` (no --entrypoint) as the one command line a user means, like `kubectl run
 * -- echo hi` or `docker run img echo hi`: one word is the line itself (so `-- 'a && b'` or python's
 * `-- 'print(42)'` keep their syntax); several words are joined, each quoted for the shell when it
 * holds anything else than plain characters, so `-- ls 'my file'` lists one file. The line is sent
 * as the inline script, which every Runtime runs (python has no "command line" of args alone).
 */
export function commandLine(words: readonly string[]): string {
  if (words.length === 1) return words[0] as string;
  return words.map((w) => (SHELL_SAFE.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)).join(" ");
}

export function buildRun(f: RunFlags, namespace: string, createdMicros: number): Run {
  checkRunFlags(f);
  const runtime = f.runtime as string;
  const spec: RunSpec = {
    runtime,
    mode: f.function ? { function: functionMode(f.function) } : { task: {} },
  };
  if (f.script !== undefined) {
    if (f.script.length === 0) throw CliError.usage(`--file ${f.file}: the script is empty`);
    if (f.script.length > Limits.inlineSourceLength)
      throw CliError.usage(
        `--file ${f.file}: the script has ${f.script.length} characters, more than the ${Limits.inlineSourceLength} an inline source may hold`,
      );
    spec.source = { inline: f.script };
  } else if (!f.function) {
    if (f.entrypoint !== undefined) {
      spec.mode = { task: { entrypoint: f.entrypoint } };
      if (f.args.length > 0) spec.mode = { task: { ...spec.mode.task, args: f.args } };
    } else {
      const line = commandLine(f.args);
      if (line.trim() === "")
        throw CliError.usage("the command after -- is empty", "e.g. krt run --runtime bash -- echo hello");
      spec.source = { inline: line };
    }
  }
  if (f.env.length > 0) spec.env = f.env.map(envOf);
  if (f.timeout !== undefined) spec.timeout = f.timeout;
  if (f.retries !== undefined) spec.retryPolicy = { maxAttempts: retriesOf(f.retries) + 1 };
  if (f.ttl !== undefined) spec.ttlSecondsAfterFinished = ttlSecondsOf(f.ttl);
  if (f.artifactInputs?.length) spec.artifactInputs = artifactInputsOf(f.artifactInputs);
  return {
    apiVersion: API_VERSION,
    kind: RUN_KIND,
    metadata: {
      ...(f.name ? { name: f.name } : { generateName: `${runtime}-` }),
      namespace,
      annotations: { [Annotations.createdMicros]: String(createdMicros) },
    },
    spec,
  };
}

function envOf(kv: string): { name: string; value: string } {
  const eq = kv.indexOf("=");
  const name = eq < 0 ? kv : kv.slice(0, eq);
  if (eq < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw CliError.usage(
      `--env "${kv}" is not NAME=VALUE`,
      "e.g. --env GREETING=hello (repeat --env for more)",
    );
  return { name, value: kv.slice(eq + 1) };
}

const ARTIFACT_NAME = /^[A-Za-z0-9._-]+$/;
const INPUT_PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** `RUN/NAME[:PATH]`: the artifact NAME of Run RUN, staged at PATH (default NAME) before the task starts. */
export function artifactInputOf(s: string): ArtifactInput {
  const slash = s.indexOf("/");
  const colon = s.indexOf(":", slash + 1);
  const run = s.slice(0, Math.max(0, slash));
  const name = slash < 0 ? "" : s.slice(slash + 1, colon < 0 ? undefined : colon);
  const path = colon < 0 ? undefined : s.slice(colon + 1);
  const bad = (why: string) =>
    CliError.usage(
      `--artifact-input "${s}": ${why}`,
      "give RUN/NAME[:PATH], e.g. --artifact-input build/report.txt or build/site:public/site",
    );
  if (!run || !NAME.test(run) || run.length > 253) throw bad("RUN is not a Run name");
  if (!ARTIFACT_NAME.test(name) || name.length > Limits.nameLength)
    throw bad("NAME is not an artifact name (letters, digits, '.', '_', '-')");
  if (path !== undefined && (!INPUT_PATH.test(path) || path.split("/").some((p) => p === "." || p === "..")))
    throw bad("PATH must be relative, '/'-separated, without '.' or '..' segments");
  return { run, name, ...(path !== undefined ? { path } : {}) };
}

function artifactInputsOf(list: readonly string[]): ArtifactInput[] {
  if (list.length > Limits.artifactCount)
    throw CliError.usage(
      `--artifact-input given ${list.length} times, at most ${Limits.artifactCount} are allowed`,
    );
  return list.map(artifactInputOf);
}

function retriesOf(s: string): number {
  const n = Number(s);
  if (!/^[0-9]+$/.test(s) || n > Limits.maxAttempts - 1)
    throw CliError.usage(`--retries "${s}" must be a whole number from 0 to ${Limits.maxAttempts - 1}`);
  return n;
}

/** `--ttl` takes seconds (`300`) or a duration (`5m`). */
function ttlSecondsOf(s: string): number {
  const n = /^[0-9]+$/.test(s) ? Number(s) : (parseApiDuration(s) ?? Number.NaN) / 1000;
  if (!Number.isFinite(n) || n > Limits.ttlSeconds || !Number.isInteger(n))
    throw CliError.usage(`--ttl "${s}" must be whole seconds (e.g. 300) or a duration (e.g. 10m, 1h)`);
  return n;
}
