/**
 * Waits for a Run to reach a terminal phase by watching it (one GET, then a watch from its
 * resourceVersion; re-established when the server ends the stream: `watchUntil`). Nothing here
 * polls.
 */
import { isTerminalPhase, type Run, RunResource } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { watchUntil } from "../watch-until.ts";

export interface WaitOptions {
  /** Give up after this many milliseconds (`CliError` WaitTimeout); default: wait forever. */
  timeoutMs?: number;
  /** Called whenever the phase changes, e.g. to report progress on stderr. */
  onPhase?(run: Run): void;
  /** Called with every version of the Run seen (the GETs and each watch event). */
  onUpdate?(run: Run): void;
  /** Also stop at this state (e.g. a function Run that became Ready); terminal phases always stop. */
  until?(run: Run): boolean;
}

export async function waitForRun(
  client: KubeClient,
  namespace: string,
  name: string,
  opts: WaitOptions = {},
): Promise<Run> {
  let lastPhase: string | undefined;
  return watchUntil<Run>(client, RunResource, namespace, name, {
    noun: "run",
    timeoutMs: opts.timeoutMs,
    done: (run) => {
      opts.onUpdate?.(run);
      const phase = run.status?.phase;
      if (phase !== lastPhase) {
        lastPhase = phase;
        opts.onPhase?.(run);
      }
      return isTerminalPhase(phase) || (opts.until?.(run) ?? false);
    },
    timeoutError: () =>
      new CliError(
        ExitCode.WaitTimeout,
        `run "${name}" did not ${opts.until ? "get there" : "finish"} within ${opts.timeoutMs}ms (phase ${lastPhase ?? "Pending"})`,
        `it keeps running; wait again with \`krt wait ${name}\` or stop it with \`krt cancel ${name}\``,
      ),
  });
}
