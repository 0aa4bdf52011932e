/**
 * `krt logs -f` and `krt run --follow`: prints what the Run already wrote, then its output live
 * while it runs — switching pods when a retry places the next attempt elsewhere — and returns
 * the Run once it ended and its output has been printed. Driven by a watch on the Run; the only
 * streams are that watch and the pod log.
 */
import { isTerminalPhase, type Run, type RunAssignment } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
import { getRun } from "../runs/fetch.ts";
import { waitForRun } from "../runs/wait.ts";
import { AttemptFollower } from "./attempt-follower.ts";
import type { LogSink } from "./log-sink.ts";
import { printTails, readRunLogs } from "./read-logs.ts";

export interface FollowOptions {
  /** Only this attempt; default: every attempt. */
  attempt?: number;
  /** Give up waiting after this many milliseconds (a WaitTimeout error). */
  timeoutMs?: number;
}

/** How long the previous attempt's stream stays open after a retry moved the Run on. */
const SWITCH_GRACE_MS = 1000;

export async function followRunLogs(
  client: KubeClient,
  namespace: string,
  name: string,
  opts: FollowOptions,
  sink: LogSink,
): Promise<Run> {
  const first = await getRun(client, namespace, name);
  const current = first.status?.assignment?.attempt ?? 0;
  if (isTerminalPhase(first.status?.phase) || (opts.attempt !== undefined && opts.attempt < current)) {
    await readRunLogs(client, first, { attempt: opts.attempt, tailFallback: true }, sink);
    return first;
  }
  if (opts.attempt === undefined && current > 1)
    await readRunLogs(client, first, { before: current, tailFallback: false }, sink);

  let follower: AttemptFollower | undefined;
  const onUpdate = (run: Run) => {
    const a: RunAssignment | undefined = run.status?.assignment;
    if (!a || (opts.attempt !== undefined && a.attempt !== opts.attempt)) return;
    if (follower && follower.pod === a.pod && follower.attempt === a.attempt) return;
    const prev = follower;
    if (prev) setTimeout(() => prev.stop(), SWITCH_GRACE_MS);
    follower = new AttemptFollower(client, run, a, sink, opts.attempt === undefined && a.attempt > 1);
  };
  onUpdate(first);
  let final: Run;
  try {
    final = await waitForRun(client, namespace, name, { timeoutMs: opts.timeoutMs, onUpdate });
  } catch (e) {
    follower?.stop();
    throw e;
  }
  const f = follower as AttemptFollower | undefined;
  if (!f) {
    await readRunLogs(client, final, { attempt: opts.attempt, tailFallback: true }, sink);
    return final;
  }
  await f.drain(final);
  if (f.error) throw f.error;
  if (f.lines === 0 && f.attempt === (final.status?.attempt ?? f.attempt))
    printTails(final, f.gone ? `pod ${f.pod} is gone` : "no output records in runtimed's log", sink);
  return final;
}
