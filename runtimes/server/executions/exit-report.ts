/**
 * Builds the TaskExited of an execution: the final reason (a completed process whose outputs
 * file breaks the rules becomes OUTPUTS_INVALID), exit code or signal, tails, outputs and times.
 */
import { readFileSync, statSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import {
  type TaskEvent,
  TaskEventSchema,
  TaskExitReason,
} from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import type { ExitStatus } from "../run-process.ts";
import type { ExecutionSpec } from "./execution-spec.ts";
import { type OutputLimits, type OutputsResult, parseOutputs } from "./outputs-file.ts";
import type { TailBuffer } from "./tail-buffer.ts";

export interface ExitFacts {
  reason: TaskExitReason;
  message: string;
  /** null when no process ran. */
  status: ExitStatus | null;
  stdout: TailBuffer;
  stderr: TailBuffer;
  startedAtMicros: number;
  finishedAtMicros: number;
}

export function exitReport(
  spec: ExecutionSpec,
  facts: ExitFacts,
): { event: TaskEvent; reason: TaskExitReason; message: string } {
  const { status } = facts;
  let outputs: Record<string, string> = {};
  let reason = facts.reason;
  let message = facts.message;
  if (status !== null) {
    const result = readOutputs(spec.outputsPath, spec.outputLimits);
    if (result.ok) outputs = result.outputs;
    else if (reason === TaskExitReason.COMPLETED) {
      reason = TaskExitReason.OUTPUTS_INVALID;
      message = result.message;
    } else message = `${message}; ${result.message}`;
  }
  const out = facts.stdout.snapshot();
  const err = facts.stderr.snapshot();
  const event = create(TaskEventSchema, {
    event: {
      case: "exited",
      value: {
        runUid: spec.runUid,
        attempt: spec.attempt,
        reason,
        message,
        exitCode: status?.exitCode ?? undefined,
        signal: status?.signal ?? "",
        stdoutTail: out.data,
        stderrTail: err.data,
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        stdoutBytes: BigInt(out.total),
        stderrBytes: BigInt(err.total),
        outputs,
        startedAtMicros: BigInt(facts.startedAtMicros),
        finishedAtMicros: BigInt(facts.finishedAtMicros),
      },
    },
  });
  return { event, reason, message };
}

/** Reads and checks the outputs file, without reading a file that is over the size limit. */
function readOutputs(path: string, limits: OutputLimits): OutputsResult {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return parseOutputs(null, limits);
  if (!stat.isFile()) return { ok: false, message: "the outputs file is not a regular file" };
  if (stat.size > limits.maxBytes) {
    return { ok: false, message: `outputs file is ${stat.size} bytes, the limit is ${limits.maxBytes}` };
  }
  return parseOutputs(readFileSync(path), limits);
}
