/**
 * Everything an execution needs on disk before its process starts: the working directory, its
 * private state directory and the script files of the plan. Failures here are a Run's problem
 * (START_FAILED with a message), not the server's.
 */
import { statSync, writeFileSync } from "node:fs";
import type { LanguageAdapter, ProgramPlan } from "../adapter.ts";
import { makeDir } from "../make-dir.ts";
import type { ExecutionSpec } from "./execution-spec.ts";

/** The plan to launch, or the START_FAILED message. */
export function prepareExecution(spec: ExecutionSpec, adapter: LanguageAdapter): ProgramPlan | string {
  if (spec.startError !== "" || spec.program === null) return spec.startError;
  try {
    makeDir(spec.cwd);
    makeDir(spec.stateDir);
  } catch (error) {
    return `cannot create the working directory ${spec.cwd}: ${errorText(error)}`;
  }
  const program = spec.program;
  if (program.kind === "entrypoint") {
    const stat = statSync(program.path, { throwIfNoEntry: false });
    if (stat === undefined || !stat.isFile())
      return `entrypoint ${program.path} does not exist or is not a file`;
  }
  const plan = adapter.plan(program, spec.stateDir);
  if ("error" in plan) return plan.error;
  try {
    for (const file of plan.files) writeFileSync(file.path, file.content);
  } catch (error) {
    return `cannot write the script: ${errorText(error)}`;
  }
  return plan;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
