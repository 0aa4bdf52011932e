/** The exit code of `krt workflow trigger --wait` for an ended WorkflowRun, and its summary. */
import type { WorkflowRun } from "@kruntimes/api";
import { ExitCode } from "../exit-codes.ts";
import type { Paint } from "../output/colour.ts";
import { paintPhase } from "../output/colour.ts";
import { workflowRunDuration } from "./columns.ts";
import { renderJobs } from "./describe-text.ts";

export function exitCodeForWorkflowRun(r: WorkflowRun): number {
  switch (r.status?.phase) {
    case "Succeeded":
      return ExitCode.Ok;
    case "Failed":
      return ExitCode.WorkflowFailed;
    case "Cancelled":
      return ExitCode.WorkflowCancelled;
    default:
      return ExitCode.Internal;
  }
}

/** `workflowrun ci-x7k2p: Failed after 1m3s (JobFailed): job test failed`, then the jobs tree. */
export function workflowRunSummary(r: WorkflowRun, nowMs: number, p: Paint): string {
  const s = r.status ?? {};
  const took = workflowRunDuration(r, nowMs);
  let head = `workflowrun ${r.metadata.name}: ${paintPhase(p, s.phase ?? "Pending")}${took ? ` after ${took}` : ""}`;
  if (s.reason && s.reason !== s.phase) head += ` (${s.reason})`;
  if (s.message) head += `: ${s.message}`;
  const outputs = Object.entries(s.outputs ?? {}).map(([k, v]) => `  ${k}=${v}`);
  return [
    head,
    ...renderJobs(r, nowMs, p).map((l) => `  ${l}`),
    ...(outputs.length ? ["outputs:", ...outputs] : []),
  ].join("\n");
}
