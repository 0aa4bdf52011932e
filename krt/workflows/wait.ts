/**
 * Waits for a WorkflowRun by watching it (one GET, then a watch from its resourceVersion,
 * re-established when the server ends the stream: `watchUntil`), until it ended or `until` holds.
 * No polling.
 */
import { type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { watchUntil } from "../watch-until.ts";
import { getWorkflowRun } from "./fetch.ts";

const TERMINAL = new Set(["Succeeded", "Failed", "Cancelled"]);

export function workflowRunEnded(r: WorkflowRun): boolean {
  return TERMINAL.has(r.status?.phase ?? "");
}

export interface WaitOptions {
  /** Give up after this many milliseconds (a WaitTimeout error); default: wait forever. */
  timeoutMs?: number;
  /** Called with every version seen. */
  onUpdate?(r: WorkflowRun): void;
  /** Also stop here; an ended run always stops. */
  until?(r: WorkflowRun): boolean;
}

export async function waitForWorkflowRun(
  client: KubeClient,
  namespace: string,
  name: string,
  opts: WaitOptions = {},
): Promise<WorkflowRun> {
  return watchUntil<WorkflowRun>(client, WorkflowRunResource, namespace, name, {
    get: () => getWorkflowRun(client, namespace, name),
    noun: "workflowrun",
    timeoutMs: opts.timeoutMs,
    done: (r) => {
      opts.onUpdate?.(r);
      return workflowRunEnded(r) || (opts.until?.(r) ?? false);
    },
    timeoutError: (last) =>
      new CliError(
        ExitCode.WaitTimeout,
        `workflowrun "${name}" did not finish within ${opts.timeoutMs}ms (phase ${last?.status?.phase ?? "Pending"})`,
        `it keeps running; see it with \`krt wfrun describe ${name}\` or stop it with \`krt wfrun cancel ${name}\``,
      ),
  });
}
