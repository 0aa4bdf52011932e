/** Table columns of `krt workflow list|get` and `krt wfrun list|get` (`-o wide` adds the wide ones). */
import type { Workflow, WorkflowRun } from "@kruntimes/api";
import { humanAge, humanDuration } from "../output/age.ts";
import type { Column } from "../output/table.ts";

export function workflowColumns(nowMs: number, allNamespaces: boolean): Column<Workflow>[] {
  const cols: Column<Workflow>[] = [
    { header: "NAME", value: (w) => w.metadata.name ?? "" },
    { header: "JOBS", value: (w) => String(Object.keys(w.spec.jobs ?? {}).length) },
    { header: "INPUTS", value: (w) => inputsText(w) },
    { header: "AGE", value: (w) => humanAge(w.metadata.creationTimestamp, nowMs) },
    { header: "RUNTIME", value: (w) => w.spec.runtime ?? "", wide: true },
    { header: "DESCRIPTION", value: (w) => w.spec.description ?? "", wide: true },
  ];
  if (allNamespaces) cols.unshift({ header: "NAMESPACE", value: (w) => w.metadata.namespace ?? "" });
  return cols;
}

/** Input names, a required one marked with `*`: `version*,debug`. */
function inputsText(w: Workflow): string {
  return Object.entries(w.spec.inputs ?? {})
    .map(([n, d]) => (d.required ? `${n}*` : n))
    .join(",");
}

export function workflowRunColumns(nowMs: number, allNamespaces: boolean): Column<WorkflowRun>[] {
  const cols: Column<WorkflowRun>[] = [
    { header: "NAME", value: (r) => r.metadata.name ?? "" },
    { header: "WORKFLOW", value: (r) => r.spec.workflowRef?.name ?? "" },
    { header: "PHASE", value: (r) => r.status?.phase ?? "Pending" },
    { header: "JOBS", value: (r) => jobsDone(r) },
    { header: "AGE", value: (r) => humanAge(r.metadata.creationTimestamp, nowMs) },
    { header: "DURATION", value: (r) => workflowRunDuration(r, nowMs) },
    { header: "REASON", value: (r) => r.status?.reason ?? "", wide: true },
    { header: "JOB PHASES", value: (r) => jobPhaseCounts(r), wide: true },
  ];
  if (allNamespaces) cols.unshift({ header: "NAMESPACE", value: (r) => r.metadata.namespace ?? "" });
  return cols;
}

/** `succeeded/total`. */
function jobsDone(r: WorkflowRun): string {
  const total = Object.keys(r.spec.jobs ?? {}).length;
  const ok = Object.values(r.status?.jobs ?? {}).filter((j) => j.phase === "Succeeded").length;
  return `${ok}/${total}`;
}

/** `2 Succeeded, 1 Running, 1 Pending` — a job not in the status yet counts as Pending. */
export function jobPhaseCounts(r: WorkflowRun): string {
  const counts = new Map<string, number>();
  for (const job of Object.keys(r.spec.jobs ?? {})) {
    const phase = r.status?.jobs?.[job]?.phase ?? "Pending";
    counts.set(phase, (counts.get(phase) ?? 0) + 1);
  }
  const order = ["Succeeded", "Failed", "Cancelled", "Skipped", "Running", "Pending"];
  return [...counts]
    .sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]))
    .map(([p, n]) => `${n} ${p}`)
    .join(", ");
}

/** start → completion, or → now while it runs; empty before it started. */
export function workflowRunDuration(r: WorkflowRun, nowMs: number): string {
  return spanText(r.status?.startTime, r.status?.completionTime, nowMs);
}

export function spanText(start: string | undefined, end: string | undefined, nowMs: number): string {
  if (!start) return "";
  const a = Date.parse(start);
  const b = end ? Date.parse(end) : nowMs;
  return Number.isNaN(a) || Number.isNaN(b) ? "" : humanDuration(b - a);
}
