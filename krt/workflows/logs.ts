/**
 * `krt wfrun logs`: the output of a WorkflowRun's child Runs, job by job in `needs` order and step
 * by step, each line prefixed `[job/step] ` — read (and followed) with `krt logs`' own code
 * (readRunLogs, followRunLogs). A `uses` job's nested WorkflowRun is shown the same way, its
 * lines prefixed `[job/nested-job/step] `.
 */
import type { StepStatus, WorkflowRun } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { followRunLogs } from "../logs/follow-logs.ts";
import type { LogSink } from "../logs/log-sink.ts";
import { readRunLogs } from "../logs/read-logs.ts";
import { getRun } from "../runs/fetch.ts";
import { getWorkflowRun } from "./fetch.ts";
import { jobOrder } from "./job-order.ts";
import { waitForWorkflowRun, workflowRunEnded } from "./wait.ts";

export interface LogFilter {
  /** Only this job (of the top-level run). */
  job?: string;
  /** Only this step; `build` also matches the steps of an Action step `build` (`build.<action step>`). */
  step?: string;
}

/** Each line and note of `inner` with `[<label>] ` before it. */
export function labelSink(inner: LogSink, label: string): LogSink {
  return {
    line: (stream, text, call) => inner.line(stream, `[${label}] ${text}`, call),
    note: (text) => inner.note(`[${label}] ${text}`),
  };
}

/** What there is to show, in order: a step's child Run, or a `uses` job's nested WorkflowRun. */
export type LogSource =
  | { kind: "run"; label: string; run: string; step: StepStatus }
  | { kind: "nested"; label: string; workflowRun: string };

export function logSources(wfr: WorkflowRun, filter: LogFilter): LogSource[] {
  const out: LogSource[] = [];
  for (const job of jobOrder(wfr.spec.jobs ?? {})) {
    if (filter.job !== undefined && job !== filter.job) continue;
    const st = wfr.status?.jobs?.[job];
    if (st?.workflowRun && filter.step === undefined)
      out.push({ kind: "nested", label: job, workflowRun: st.workflowRun });
    for (const step of st?.steps ?? []) {
      if (filter.step !== undefined && step.name !== filter.step && !step.name.startsWith(`${filter.step}.`))
        continue;
      if (step.run) out.push({ kind: "run", label: `${job}/${step.name}`, run: step.run, step });
    }
  }
  return out;
}

/** Checks --job/--step against the spec, so a typo is an error rather than empty output. */
export function checkFilter(wfr: WorkflowRun, filter: LogFilter): void {
  const jobs = wfr.spec.jobs ?? {};
  const name = wfr.metadata.name;
  if (filter.job !== undefined && !(filter.job in jobs))
    throw CliError.usage(
      `workflowrun "${name}" has no job "${filter.job}"`,
      `its jobs: ${jobOrder(jobs).join(", ")}`,
    );
  if (filter.step !== undefined) {
    const steps = Object.entries(jobs)
      .filter(([j]) => filter.job === undefined || j === filter.job)
      .flatMap(([, spec]) => (spec.steps ?? []).map((s) => s.name));
    if (!steps.includes(filter.step))
      throw CliError.usage(
        `${filter.job ? `job "${filter.job}"` : `workflowrun "${name}"`} has no step "${filter.step}"`,
        steps.length ? `its steps: ${[...new Set(steps)].join(", ")}` : "its jobs call Workflows; use --job",
      );
  }
}

/** Prints what the child Runs already wrote. */
export async function readWorkflowRunLogs(
  client: KubeClient,
  wfr: WorkflowRun,
  filter: LogFilter,
  sink: LogSink,
  /** Before each label: the `uses` jobs that led here, `outer-job/`. */
  prefix = "",
): Promise<void> {
  const namespace = wfr.metadata.namespace ?? "";
  const sources = logSources(wfr, filter);
  if (sources.length === 0)
    (prefix ? labelSink(sink, prefix.slice(0, -1)) : sink).note(
      `workflowrun ${wfr.metadata.name} has no child Runs${filter.job || filter.step ? " matching --job/--step" : ""} yet (phase ${wfr.status?.phase ?? "Pending"})`,
    );
  for (const src of sources) {
    const out = labelSink(sink, prefix + src.label);
    if (src.kind === "nested") {
      const nested = await optional(getWorkflowRun(client, namespace, src.workflowRun));
      if (nested) await readWorkflowRunLogs(client, nested, {}, sink, `${prefix}${src.label}/`);
      else out.note(`nested workflowrun ${src.workflowRun} is gone`);
      continue;
    }
    const run = await optional(getRun(client, namespace, src.run));
    if (run) await readRunLogs(client, run, { tailFallback: true }, out);
    else out.note(`run ${src.run} is gone (deleted or its TTL passed); its output with it`);
  }
}

/**
 * Follows the child Runs one after another in order — each printed from its start and followed
 * until it ends — waiting (by watch) for the next to be created, until the WorkflowRun ended and
 * every child was shown. Parallel jobs are shown one after the other, not interleaved.
 */
export async function followWorkflowRunLogs(
  client: KubeClient,
  namespace: string,
  name: string,
  filter: LogFilter,
  sink: LogSink,
  prefix = "",
): Promise<WorkflowRun> {
  const shown = new Set<string>();
  const key = (s: LogSource) => (s.kind === "run" ? `run/${s.run}` : `wfrun/${s.workflowRun}`);
  const next = (r: WorkflowRun) => logSources(r, filter).find((s) => !shown.has(key(s)));
  let wfr = await getWorkflowRun(client, namespace, name);
  checkFilter(wfr, filter);
  for (;;) {
    const src = next(wfr);
    if (!src) {
      if (workflowRunEnded(wfr)) return wfr;
      wfr = await waitForWorkflowRun(client, namespace, name, { until: (r) => next(r) !== undefined });
      continue;
    }
    shown.add(key(src));
    const out = labelSink(sink, prefix + src.label);
    try {
      if (src.kind === "nested")
        await followWorkflowRunLogs(client, namespace, src.workflowRun, {}, sink, `${prefix}${src.label}/`);
      else await followRunLogs(client, namespace, src.run, {}, out);
    } catch (e) {
      if (!(e instanceof CliError && e.exitCode === ExitCode.NotFound)) throw e;
      out.note(`${src.kind === "run" ? `run ${src.run}` : `workflowrun ${src.workflowRun}`} is gone`);
    }
    wfr = await getWorkflowRun(client, namespace, name);
  }
}

async function optional<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof CliError && e.exitCode === ExitCode.NotFound) return undefined;
    throw e;
  }
}
