/**
 * The python adapter.
 *
 * - inline: the script is written to a file and run as `python3 <file>`.
 * - entrypoint + args: `python3 <entrypoint> <args...>`.
 * - args alone: not supported — Python has no "command line" unit that args could map to
 *   without inventing a language; such Runs end START_FAILED with a message saying so.
 *
 * Warm path: a pre-started `python3 -c <bootstrap>` (site imported, nothing else) reads its job
 * from stdin and runs the script in a fresh __main__; one interpreter per Run, discarded after.
 * Runs that change PYTHON*, LANG, LC_* or HOME are cold-started, because the interpreter reads
 * them while starting (sys.path, stdio encodings, user site directory).
 */
import { join } from "node:path";
import { TaskInput } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { changedKeys, type LanguageAdapter, type Program, type ProgramPlan } from "../server/adapter.ts";
import { PYTHON_BOOTSTRAP } from "./bootstrap.ts";
import { pythonFunctions } from "./function-worker.ts";

export const COMMANDS_UNSUPPORTED =
  "the python runtime does not run args as commands: set inline, or entrypoint with args";

function startupKey(key: string): boolean {
  return key.startsWith("PYTHON") || key.startsWith("LC_") || key === "LANG" || key === "HOME";
}

export const pythonAdapter: LanguageAdapter = {
  language: "python",
  inputs: [TaskInput.INLINE, TaskInput.ENTRYPOINT],

  plan(program: Program, stateDir: string): ProgramPlan | { error: string } {
    switch (program.kind) {
      case "inline": {
        const path = join(stateDir, "inline.py");
        return { files: [{ path, content: program.script }], scriptPath: path, args: [] };
      }
      case "entrypoint":
        return { files: [], scriptPath: program.path, args: program.args };
      case "commands":
        return { error: COMMANDS_UNSUPPORTED };
    }
  },

  coldArgv: (interpreter, plan) => [interpreter, plan.scriptPath, ...plan.args],

  warmArgv: (interpreter) => [interpreter, "-c", PYTHON_BOOTSTRAP],

  warmJob(spec) {
    const env = Object.entries(spec.env).map(([key, value]) => `${key}=${value}`);
    const fields = [spec.cwd, spec.plan.scriptPath, String(spec.plan.args.length), ...spec.plan.args];
    fields.push(String(env.length), ...env);
    return new TextEncoder().encode(fields.join("\0"));
  },

  warmEligible(env, baseEnv) {
    return !changedKeys(env, baseEnv).some(startupKey);
  },

  functions: pythonFunctions,

  versionArgv: (interpreter) => [interpreter, "-c", "import sys; print(sys.version.split()[0], end='')"],
};
