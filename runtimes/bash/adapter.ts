/**
 * The bash adapter.
 *
 * - inline: the script is written to a file and run as `bash <file>`.
 * - entrypoint + args: `bash <entrypoint> <args...>` (the file needs no executable bit).
 * - args alone: each arg is one command line; they are written in order, one per line, after
 *   `set -e`, so the Run stops at the first failing command with that command's exit status
 *   (with bash's usual set -e exemptions: conditions, `&&`/`||` lists, non-final pipeline parts).
 *
 * Warm path: a pre-started `bash -c <bootstrap>` blocks on `read` from stdin. Its job is the path
 * of a generated file that redirects stdin to /dev/null, changes directory, exports the Run's
 * environment, sets `$0` (BASH_ARGV0) and the positional parameters; the bootstrap then sources
 * the script itself in the same process, which saves the second exec that would otherwise make
 * warm no faster than cold. See docs/runtime-server-contract.md for the two visible differences.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TaskInput } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import {
  changedKeys,
  type LanguageAdapter,
  type LaunchSpec,
  type Program,
  type ProgramPlan,
} from "../server/adapter.ts";
import { bashFunctions } from "./function-worker.ts";
import { quote } from "./quote.ts";

export const BASH_BOOTSTRAP = `printf R; IFS= read -r __kj || exit 70; source -- "$__kj"; unset __kj; source -- "$0"`;

/** Variables bash reads or resets at start-up; a Run changing one is cold-started. */
const startupKeys = new Set([
  "IFS",
  "ENV",
  "SHELLOPTS",
  "BASHOPTS",
  "POSIXLY_CORRECT",
  "SHLVL",
  "PWD",
  "OLDPWD",
  "_",
  "UID",
  "EUID",
  "PPID",
  "GROUPS",
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "LINENO",
  "HISTCMD",
  "EPOCHSECONDS",
  "EPOCHREALTIME",
  "FUNCNAME",
]);
const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

export { quote };

export function commandsScript(commands: readonly string[]): string {
  return `set -e\n${commands.join("\n")}\n`;
}

/** The job file a warm bash sources before it sources the script. */
export function jobScript(spec: LaunchSpec, baseEnv: Readonly<Record<string, string>>): string {
  const lines = ["unset BASH_EXECUTION_STRING", "exec 0</dev/null", `cd -- ${quote(spec.cwd)} || exit 70`];
  // cd set OLDPWD to the idle directory; a cold start has the environment's value, or none.
  const oldpwd = spec.env.OLDPWD;
  lines.push(oldpwd === undefined ? "unset OLDPWD" : `export OLDPWD=${quote(oldpwd)}`);
  for (const key of changedKeys(spec.env, baseEnv)) lines.push(`export ${key}=${quote(spec.env[key]!)}`);
  lines.push(`BASH_ARGV0=${quote(spec.plan.scriptPath)}`);
  lines.push(["set --", ...spec.plan.args.map(quote)].join(" "));
  return `${lines.join("\n")}\n`;
}

export const bashAdapter: LanguageAdapter = {
  language: "bash",
  inputs: [TaskInput.INLINE, TaskInput.ENTRYPOINT, TaskInput.COMMANDS],

  plan(program: Program, stateDir: string): ProgramPlan | { error: string } {
    switch (program.kind) {
      case "inline": {
        const path = join(stateDir, "inline.sh");
        return { files: [{ path, content: program.script }], scriptPath: path, args: [] };
      }
      case "entrypoint":
        return { files: [], scriptPath: program.path, args: program.args };
      case "commands": {
        const path = join(stateDir, "commands.sh");
        return { files: [{ path, content: commandsScript(program.commands) }], scriptPath: path, args: [] };
      }
    }
  },

  coldArgv: (interpreter, plan) => [interpreter, plan.scriptPath, ...plan.args],

  // --norc: a `bash -c` whose stdin is a socket (Bun pipes are socketpairs) would otherwise think
  // sshd started it and source ~/.bashrc, which a script run cold never does.
  warmArgv: (interpreter) => [interpreter, "--norc", "-c", BASH_BOOTSTRAP, "kruntime-warm-bash"],

  warmJob(spec, baseEnv) {
    const path = join(spec.stateDir, "job.sh");
    writeFileSync(path, jobScript(spec, baseEnv));
    return new TextEncoder().encode(`${path}\n`);
  },

  warmEligible(env, baseEnv) {
    for (const key of changedKeys(env, baseEnv)) {
      if (!identifier.test(key) || startupKeys.has(key) || key.startsWith("BASH")) return false;
    }
    return true;
  },

  functions: bashFunctions,

  versionArgv: (interpreter) => [interpreter, "-c", 'printf %s "$BASH_VERSION"'],
};
