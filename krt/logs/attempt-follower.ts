/**
 * Follows one attempt's output live from runtimed's log on its pod, and knows when it has printed
 * everything: when the last lines printed match the ends of the status tails runtimed wrote with
 * the terminal status (or, without tails, when the log has been quiet for a moment).
 */
import type { Run, RunAssignment } from "@kruntimes/api";
import { isNotFound, type KubeClient, KubeError } from "@kruntimes/kube";
import type { LogSink } from "./log-sink.ts";
import { podOutput, sinceCreation } from "./pod-output.ts";
import { tailLines } from "./read-logs.ts";

/** How long the log may stay quiet after the Run ended before a follower without tails to match stops. */
const QUIET_MS = 300;
/** The longest a follower waits for the log to catch up with the terminal status. */
const DRAIN_MAX_MS = 3000;

export class AttemptFollower {
  readonly pod: string;
  readonly attempt: number;
  lines = 0;
  /** The pod or its runtimed container is gone (404/400 from the log endpoint). */
  gone = false;
  error: unknown;
  private last: { stdout?: string; stderr?: string } = {};
  private lastLineAt = Date.now();
  private readonly abort = new AbortController();
  readonly done: Promise<void>;

  constructor(
    private readonly client: KubeClient,
    run: Run,
    a: RunAssignment,
    private readonly sink: LogSink,
    header: boolean,
  ) {
    this.pod = a.pod;
    this.attempt = a.attempt;
    if (header) sink.note(`==> attempt ${a.attempt} <==`);
    this.done = this.pump(run);
  }

  private async pump(run: Run): Promise<void> {
    try {
      const query = {
        namespace: run.metadata.namespace ?? "",
        pod: this.pod,
        follow: true,
        sinceTime: sinceCreation(run.metadata.creationTimestamp),
        signal: this.abort.signal,
      };
      for await (const o of podOutput(this.client, query, {
        runUID: run.metadata.uid ?? "",
        attempt: this.attempt,
      })) {
        this.sink.line(o.stream, o.line, o.call);
        this.last[o.stream] = o.line;
        this.lines++;
        this.lastLineAt = Date.now();
      }
    } catch (e) {
      if (this.abort.signal.aborted) return;
      if (isNotFound(e) || KubeError.is(e, 400)) this.gone = true;
      else this.error = e;
    }
  }

  /** Waits until the output printed so far ends as `final`'s tails do (bounded), then stops. */
  async drain(final: Run): Promise<void> {
    const s = final.status ?? {};
    const hasTails = Boolean(s.stdoutTail || s.stderrTail);
    const caughtUp = () =>
      tailLines(s.stdoutTail).at(-1) === this.last.stdout &&
      tailLines(s.stderrTail).at(-1) === this.last.stderr;
    const started = Date.now();
    let finished = false;
    this.done.then(() => {
      finished = true;
    });
    while (!finished && Date.now() - started < DRAIN_MAX_MS) {
      const quiet = Date.now() - this.lastLineAt;
      if (hasTails ? caughtUp() : quiet >= QUIET_MS) break;
      await Bun.sleep(20);
    }
    this.stop();
    await this.done;
  }

  stop(): void {
    this.abort.abort();
  }
}
