/**
 * Waits for a WorkflowRun by watching it (one GET, then a watch from its resourceVersion,
 * re-established when the server ends the stream), until it ended or `until` holds. No polling.
 */
import { type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import { isGone, type KubeClient, path, watchStream } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
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
  const abort = new AbortController();
  let timedOut = false;
  let last: WorkflowRun | undefined;
  const timer =
    opts.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, opts.timeoutMs)
      : undefined;
  const seen = (r: WorkflowRun) => {
    last = r;
    opts.onUpdate?.(r);
    return workflowRunEnded(r) || (opts.until?.(r) ?? false);
  };
  try {
    for (;;) {
      const r = await getWorkflowRun(client, namespace, name);
      if (seen(r)) return r;
      try {
        for await (const ev of watchStream<WorkflowRun>(
          client,
          path(WorkflowRunResource, namespace),
          { fieldSelector: `metadata.name=${name}`, resourceVersion: r.metadata.resourceVersion },
          abort.signal,
        )) {
          if (ev.type === "BOOKMARK") continue;
          if (ev.type === "DELETED")
            throw new CliError(ExitCode.NotFound, `workflowrun "${name}" was deleted while waiting for it`);
          if (seen(ev.object)) return ev.object;
        }
      } catch (e) {
        if (!isGone(e)) throw e;
      }
    }
  } catch (e) {
    if (timedOut)
      throw new CliError(
        ExitCode.WaitTimeout,
        `workflowrun "${name}" did not finish within ${opts.timeoutMs}ms (phase ${last?.status?.phase ?? "Pending"})`,
        `it keeps running; see it with \`krt wfrun describe ${name}\` or stop it with \`krt wfrun cancel ${name}\``,
      );
    throw e;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
