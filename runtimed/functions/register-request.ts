/**
 * A function Run as the Runtime Server's RegisterRequest: the inline module, the handler, env,
 * concurrency and limits (durations read with the API's own parser; a zero field means "the
 * server's default", which equals `FunctionLimits`), and a working directory per Run.
 */
import { create } from "@bufbuild/protobuf";
import { FunctionLimits, parseApiDuration, type Run } from "@kruntimes/api";
import {
  type RegisterRequest,
  RegisterRequestSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

const MAX_UINT32 = 0xffff_ffff;

/** Milliseconds of an API duration as a uint32 field; 0 (server default / never) when unset. */
export function durationField(text: string | undefined): number {
  if (text === undefined) return 0;
  const ms = parseApiDuration(text);
  return ms === undefined ? 0 : Math.min(MAX_UINT32, Math.max(0, Math.round(ms)));
}

/** The working directory, relative to the workspace root: one per Run, shared by its attempts. */
export function functionWorkingDir(runUid: string): string {
  return `${runUid}/fn`;
}

/** `workingDir`: a PersistentWorkspace's directory; unset = the Run's own `functionWorkingDir`. */
export function registerRequest(run: Run, attempt: number, workingDir?: string): RegisterRequest {
  const f = run.spec.mode.function ?? {};
  const uid = run.metadata.uid ?? "";
  const env: Record<string, string> = {};
  for (const e of run.spec.env ?? []) env[e.name] = e.value;
  return create(RegisterRequestSchema, {
    runUid: uid,
    runName: run.metadata.name ?? "",
    attempt,
    source: run.spec.source?.inline ?? "",
    handler: f.handler ?? "handler",
    env,
    concurrency: f.concurrency ?? FunctionLimits.defaultConcurrency,
    queueLimit: FunctionLimits.defaultQueueLimit,
    maxRequestBytes: f.maxRequestBytes ?? 0,
    maxResponseBytes: f.maxResponseBytes ?? 0,
    invocationTimeoutMs: durationField(f.invocationTimeout),
    idleTimeoutMs: durationField(f.idleTimeout),
    workingDir: workingDir ?? functionWorkingDir(uid),
  });
}
