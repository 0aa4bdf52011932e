/**
 * Turns an ExecuteRequest into an ExecutionSpec. Mistakes only a buggy caller can make (bad
 * keys, limits above the maxima, a working dir outside the workspace) are INVALID_ARGUMENT call
 * errors; mistakes a Run's author can make (inline with args, an input this runtime does not
 * take, a malformed env) become a START_FAILED exit so they land in the Run's status.
 */
import { isAbsolute, join, relative, resolve } from "node:path";
import { TaskInput } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import type { ExecuteRequest, TaskLimits } from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import type { LanguageAdapter, Program } from "./adapter.ts";
import { RuntimeServerError } from "./errors.ts";
import type { ExecutionSpec } from "./executions/execution.ts";
import type { ServerOptions } from "./options.ts";

export const uidPattern = /^[A-Za-z0-9._-]{1,128}$/;

function invalid(message: string): RuntimeServerError {
  return new RuntimeServerError("invalid_argument", message);
}

function limit(name: string, requested: number, fallback: number, max: number): number {
  if (requested === 0) return fallback;
  if (requested > max) throw invalid(`limits.${name} is ${requested}, this server accepts at most ${max}`);
  return requested;
}

export function workingDir(
  root: string,
  hint: string,
  runUid: string,
  attempt: number,
): { cwd: string; isDefault: boolean } {
  if (hint === "") return { cwd: join(root, runUid, String(attempt)), isDefault: true };
  if (isAbsolute(hint)) throw invalid(`working_dir must be relative to the workspace root, got ${hint}`);
  const cwd = resolve(root, hint);
  const rel = relative(root, cwd);
  if (rel.startsWith("..") || isAbsolute(rel)) throw invalid(`working_dir ${hint} leaves the workspace root`);
  return { cwd, isDefault: false };
}

/** The Program, or a START_FAILED message. */
function program(req: ExecuteRequest, cwd: string, adapter: LanguageAdapter): Program | string {
  const supported = (input: TaskInput) => adapter.inputs.includes(input);
  switch (req.program.case) {
    case "inline":
      if (req.args.length > 0) return "inline is a standalone script: it takes no args";
      if (!supported(TaskInput.INLINE)) return `the ${adapter.language} runtime does not run inline scripts`;
      return { kind: "inline", script: req.program.value };
    case "entrypoint":
      if (req.program.value === "") return "entrypoint is empty";
      if (!supported(TaskInput.ENTRYPOINT)) return `the ${adapter.language} runtime does not run entrypoints`;
      return { kind: "entrypoint", path: resolve(cwd, req.program.value), args: req.args };
    default:
      if (req.args.length === 0) return "nothing to run: set inline, entrypoint, or args";
      return { kind: "commands", commands: req.args };
  }
}

/** Problems with the Run's env, as a START_FAILED message; "" when it is fine. */
export function envProblem(env: Record<string, string>): string {
  for (const [key, value] of Object.entries(env)) {
    if (key === "" || key.includes("=") || key.includes("\0"))
      return `env name ${JSON.stringify(key)} is not valid`;
    if (value.includes("\0")) return `env ${key} contains a NUL byte`;
  }
  return "";
}

export function toExecutionSpec(
  req: ExecuteRequest,
  options: ServerOptions,
  adapter: LanguageAdapter,
): ExecutionSpec {
  if (!uidPattern.test(req.runUid) || req.runUid === "." || req.runUid === "..") {
    throw invalid(
      `run_uid must match ${uidPattern.source} and not be . or .., got ${JSON.stringify(req.runUid)}`,
    );
  }
  if (req.attempt < 1) throw invalid("attempt must be >= 1");
  const l = options.limits;
  const requested: TaskLimits | undefined = req.limits;
  const tailBytes = limit("tail_bytes", requested?.tailBytes ?? 0, l.defaultTailBytes, l.maxTailBytes);
  const outputLimits = {
    maxCount: limit(
      "outputs_max_count",
      requested?.outputsMaxCount ?? 0,
      l.defaultOutputsMaxCount,
      l.maxOutputsMaxCount,
    ),
    maxBytes: limit(
      "outputs_max_bytes",
      requested?.outputsMaxBytes ?? 0,
      l.defaultOutputsMaxBytes,
      l.maxOutputsMaxBytes,
    ),
    maxValueBytes: limit(
      "output_value_max_bytes",
      requested?.outputValueMaxBytes ?? 0,
      l.defaultOutputValueMaxBytes,
      l.maxOutputValueMaxBytes,
    ),
  };
  const { cwd, isDefault } = workingDir(options.workspaceRoot, req.workingDir, req.runUid, req.attempt);
  const stateDir = join(options.stateDir, "executions", `${req.runUid}.${req.attempt}`);
  const outputsPath = join(stateDir, "outputs");
  const env: Record<string, string> = {
    ...options.baseEnv,
    ...req.env,
    KRUNTIME_RUN_UID: req.runUid,
    KRUNTIME_RUN_NAME: req.runName,
    KRUNTIME_ATTEMPT: String(req.attempt),
    KRUNTIME_WORKDIR: cwd,
    KRUNTIME_OUTPUTS: outputsPath,
  };
  const found = program(req, cwd, adapter);
  const startError = typeof found === "string" ? found : envProblem(req.env);
  return {
    runUid: req.runUid,
    runName: req.runName,
    attempt: req.attempt,
    program: typeof found === "string" || startError !== "" ? null : found,
    startError,
    env,
    timeoutMs: req.timeoutMs,
    graceMs: req.terminationGraceMs === 0 ? options.defaultGraceMs : req.terminationGraceMs,
    tailBytes,
    outputLimits,
    cwd,
    defaultCwd: isDefault,
    stateDir,
    outputsPath,
  };
}
