/**
 * `krt logs` of what is already written: the Run's output records from runtimed's log on the
 * pod of the current attempt — and, for earlier attempts, on the other pods of its Runtime that
 * still exist — grouped by attempt. When the latest attempt's records are gone (pod deleted, log
 * rotated) but the Run ended, it falls back to `status.stdoutTail/stderrTail` and says so.
 */
import { isTerminalPhase, Labels, type Run } from "@kruntimes/api";
import { isNotFound, type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import type { LogSink } from "./log-sink.ts";
import type { OutputLine } from "./output-line.ts";
import { podOutput, sinceCreation } from "./pod-output.ts";

export interface ReadLogsOptions {
  /** Only this attempt; default: every attempt that can still be found. */
  attempt?: number;
  /** Only attempts before this one (used by --follow before it follows the current attempt). */
  before?: number;
  /** Fall back to the status tails for the latest attempt when its records are gone. */
  tailFallback: boolean;
}

/** The attempts that were printed (for callers that follow on). */
export async function readRunLogs(
  client: KubeClient,
  run: Run,
  opts: ReadLogsOptions,
  sink: LogSink,
): Promise<number[]> {
  const name = run.metadata.name ?? "";
  const namespace = run.metadata.namespace ?? "";
  const assignment = run.status?.assignment;
  const latest = Math.max(run.status?.attempt ?? 0, assignment?.attempt ?? 0);
  if (opts.attempt !== undefined && (opts.attempt < 1 || opts.attempt > latest))
    throw CliError.usage(
      `run "${name}" has no attempt ${opts.attempt}${latest ? ` (its attempts are 1–${latest})` : " (it has not started)"}`,
    );
  if (latest === 0) {
    sink.note(
      `run ${name} has not been placed on a pod yet (phase ${run.status?.phase ?? "Pending"}); no output`,
    );
    return [];
  }
  const wants = (a: number) =>
    (opts.attempt === undefined || a === opts.attempt) && (opts.before === undefined || a < opts.before);

  // Earlier attempts may have run on other pods; status names only the current one.
  const pods = new Set<string>(assignment ? [assignment.pod] : []);
  const needOthers = [...Array(latest).keys()]
    .map((i) => i + 1)
    .some((a) => wants(a) && a !== assignment?.attempt);
  if (needOthers) {
    const others = await runtimePods(client, namespace, run.spec.runtime);
    if (others === undefined)
      sink.note(
        `may not list pods in namespace ${namespace}: earlier attempts are searched only on pod ${assignment?.pod ?? "(none)"}`,
      );
    for (const p of others ?? []) pods.add(p);
  }

  const byAttempt = new Map<number, OutputLine[]>();
  const gone: string[] = [];
  for (const pod of pods) {
    try {
      for await (const o of podOutput(
        client,
        { namespace, pod, follow: false, sinceTime: sinceCreation(run.metadata.creationTimestamp) },
        { runUID: run.metadata.uid ?? "" },
      )) {
        if (!wants(o.attempt)) continue;
        const list = byAttempt.get(o.attempt) ?? [];
        list.push(o);
        byAttempt.set(o.attempt, list);
      }
    } catch (e) {
      if (isNotFound(e) || KubeError.is(e, 400)) gone.push(pod);
      else throw e;
    }
  }

  const attempts = [...byAttempt.keys()].sort((a, b) => a - b);
  const several = attempts.length > 1 || (attempts.length === 1 && opts.attempt === undefined && latest > 1);
  for (const a of attempts) {
    if (several) sink.note(`==> attempt ${a} <==`);
    for (const o of byAttempt.get(a) ?? []) sink.line(o.stream, o.line, o.call);
  }
  for (let a = 1; a < latest; a++)
    if (wants(a) && !byAttempt.has(a))
      sink.note(`attempt ${a}: no output found; the pod it ran on is gone or its runtimed log was rotated`);
  if (wants(latest) && !byAttempt.has(latest) && opts.tailFallback && isTerminalPhase(run.status?.phase)) {
    const where =
      assignment && gone.includes(assignment.pod)
        ? `pod ${assignment.pod} is gone`
        : "no output records in runtimed's log";
    printTails(run, `${where}; showing the status tails of attempt ${latest}`, sink, several);
  }
  return attempts;
}

/** The last ≤16 KiB of stdout and of stderr that runtimed stored in the Run's status. */
export function printTails(run: Run, why: string, sink: LogSink, header = false): void {
  const s = run.status ?? {};
  if (!s.stdoutTail && !s.stderrTail) return;
  const cut = [s.stdoutTruncated && "stdout", s.stderrTruncated && "stderr"].filter(Boolean);
  sink.note(
    `${why} (status.stdoutTail, then status.stderrTail${cut.length ? `; ${cut.join(" and ")} cut to the last 16 KiB` : ""})`,
  );
  if (header) sink.note(`==> attempt ${s.attempt ?? s.assignment?.attempt} <==`);
  for (const l of tailLines(s.stdoutTail)) sink.line("stdout", l);
  for (const l of tailLines(s.stderrTail)) sink.line("stderr", l);
}

export function tailLines(tail: string | undefined): string[] {
  if (!tail) return [];
  const lines = tail.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The Runtime's pods; undefined when listing pods is forbidden. */
async function runtimePods(
  client: KubeClient,
  namespace: string,
  runtime: string,
): Promise<string[] | undefined> {
  try {
    const list = await client.list<{ metadata: { name?: string } }>(path(R.pods, namespace), {
      labelSelector: `${Labels.runtime}=${runtime}`,
    });
    return list.items.map((p) => p.metadata.name ?? "").filter(Boolean);
  } catch (e) {
    if (KubeError.is(e, 403)) return undefined;
    throw e;
  }
}
