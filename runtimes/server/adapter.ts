/**
 * LanguageAdapter is the only language-specific part of the Runtime Server: how a program is
 * turned into files and an argv, how a warm interpreter is started and handed its job, and which
 * environment changes a warm interpreter cannot honour (those Runs are cold-started instead).
 */
import type { TaskInput } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import type { FunctionAdapter } from "./functions/worker.ts";
import type { Language } from "./options.ts";

/** What a Run asks to run, after the request's oneof and args are sorted out. */
export type Program =
  | { kind: "inline"; script: string }
  /** `path` is absolute (resolved against the working directory). */
  | { kind: "entrypoint"; path: string; args: string[] }
  | { kind: "commands"; commands: string[] };

export interface ProgramPlan {
  /** Files to write before the start (script bodies for inline and commands). */
  files: Array<{ path: string; content: string }>;
  /** The script the interpreter runs, and its arguments. */
  scriptPath: string;
  args: string[];
}

export interface LaunchSpec {
  plan: ProgramPlan;
  /** Absolute working directory. */
  cwd: string;
  /** The Run's complete environment. */
  env: Record<string, string>;
  /** Private directory of this execution (job files go here). */
  stateDir: string;
}

export interface LanguageAdapter {
  readonly language: Language;
  readonly inputs: readonly TaskInput[];
  /** Turns a program into a plan, or a message for a START_FAILED exit. */
  plan(program: Program, stateDir: string): ProgramPlan | { error: string };
  /** argv of a cold start: same semantics as the warm path, paid on the critical path. */
  coldArgv(interpreter: string, plan: ProgramPlan): string[];
  /**
   * argv of a warm interpreter. It writes one byte "R" to stdout once ready, then blocks reading
   * its job from stdin until EOF.
   */
  warmArgv(interpreter: string): string[];
  /** The job written to a warm interpreter's stdin (stdin is closed after it). */
  warmJob(spec: LaunchSpec, baseEnv: Readonly<Record<string, string>>): Uint8Array;
  /** False when `env` differs from `baseEnv` in something the interpreter reads only at start-up. */
  warmEligible(env: Readonly<Record<string, string>>, baseEnv: Readonly<Record<string, string>>): boolean;
  /** How function workers of this language start and serve invocations. */
  readonly functions: FunctionAdapter;
  /** argv printing the interpreter version on stdout. */
  versionArgv(interpreter: string): string[];
}

/** Keys whose value in `env` differs from `baseEnv` (added or changed). */
export function changedKeys(
  env: Readonly<Record<string, string>>,
  baseEnv: Readonly<Record<string, string>>,
): string[] {
  const keys: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    if (baseEnv[key] !== value) keys.push(key);
  }
  return keys;
}
