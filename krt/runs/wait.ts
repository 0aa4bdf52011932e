/**
 * Waits for a Run to reach a terminal phase by watching it (one GET, then a watch from its
 * resourceVersion; re-established when the server ends the stream). Nothing here polls.
 */
import { isTerminalPhase, type Run, RunResource } from "@kruntimes/api";
import { isGone, type KubeClient, path, watchStream } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

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
  const abort = new AbortController();
  let timedOut = false;
  const timer =
    opts.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, opts.timeoutMs)
      : undefined;
  let lastPhase: string | undefined;
  const seen = (run: Run) => {
    opts.onUpdate?.(run);
    const phase = run.status?.phase;
    if (phase !== lastPhase) {
      lastPhase = phase;
      opts.onPhase?.(run);
    }
    return isTerminalPhase(phase) || (opts.until?.(run) ?? false);
  };
  try {
    for (;;) {
      const run = await client.get<Run>(path(RunResource, namespace, name));
      if (seen(run)) return run;
      try {
        for await (const ev of watchStream<Run>(
          client,
          path(RunResource, namespace),
          { fieldSelector: `metadata.name=${name}`, resourceVersion: run.metadata.resourceVersion },
          abort.signal,
        )) {
          if (ev.type === "BOOKMARK") continue;
          if (ev.type === "DELETED")
            throw new CliError(ExitCode.NotFound, `run "${name}" was deleted while waiting for it`);
          if (seen(ev.object)) return ev.object;
        }
      } catch (e) {
        if (!isGone(e)) throw e;
      }
      // The server closed the stream (its watch timeout) or the resourceVersion expired: GET again.
    }
  } catch (e) {
    if (timedOut)
      throw new CliError(
        ExitCode.WaitTimeout,
        `run "${name}" did not ${opts.until ? "get there" : "finish"} within ${opts.timeoutMs}ms (phase ${lastPhase ?? "Pending"})`,
        `it keeps running; wait again with \`krt wait ${name}\` or stop it with \`krt cancel ${name}\``,
      );
    throw e;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
