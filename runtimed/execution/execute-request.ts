/**
 * A Run's attempt as a Runtime Server ExecuteRequest: the program (inline script, entrypoint +
 * args, or shell commands), env, the per-attempt timeout, and limits chosen so what the server
 * reports fits `Run.status` (tails of `Limits.tailLength`, at most `Limits.outputCount` outputs).
 */
import { isAbsolute, join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { durationOr, Limits, type Run } from "@kruntimes/api";
import {
  type ExecuteRequest,
  ExecuteRequestSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";

const MAX_TIMEOUT_MS = 0xffff_ffff;

/**
 * `workspace` is where the Run's relative entrypoint resolves (the API says: against /workspace).
 * `workingDir`, relative to the Runtime Server's workspace root, is a PersistentWorkspace's
 * directory; empty = the server's fresh per-attempt default.
 */
export function executeRequest(
  run: Run,
  attempt: number,
  workspace: string,
  workingDir = "",
): ExecuteRequest {
  const task = run.spec.mode.task ?? {};
  const inline = run.spec.source?.inline;
  let program: ExecuteRequest["program"] = { case: undefined };
  if (inline !== undefined) program = { case: "inline", value: inline };
  else if (task.entrypoint !== undefined)
    program = {
      case: "entrypoint",
      value: isAbsolute(task.entrypoint) ? task.entrypoint : join(workspace, task.entrypoint),
    };
  const env: Record<string, string> = {};
  for (const e of run.spec.env ?? []) env[e.name] = e.value;
  const timeoutMs = Math.min(MAX_TIMEOUT_MS, Math.max(0, Math.round(durationOr(run.spec.timeout, 0))));
  return create(ExecuteRequestSchema, {
    runUid: run.metadata.uid ?? "",
    runName: run.metadata.name ?? "",
    attempt,
    program,
    args: inline !== undefined ? [] : (task.args ?? []),
    env,
    timeoutMs,
    workingDir,
    limits: {
      tailBytes: Limits.tailLength,
      outputsMaxCount: Limits.outputCount,
      outputValueMaxBytes: Limits.outputValueLength,
    },
  });
}
