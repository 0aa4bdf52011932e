/**
 * `krt wfrun describe`: the WorkflowRun's header (workflow, inputs, phase, timing), then its DAG —
 * each job in `needs` order with its phase and timing, and under it, as a tree, its steps (phase,
 * child Run, duration, exit code, reason), outputs and artifacts; a `uses` job names its nested
 * WorkflowRun — then the run's outputs, conditions and events. Colours only through `Paint`.
 */
import { type JobStatus, Labels, type StepStatus, type WorkflowJob, type WorkflowRun } from "@kruntimes/api";
import { humanAge } from "../output/age.ts";
import { type Paint, paint, paintPhase } from "../output/colour.ts";
import { conditionsSection, eventsSection, type KubeEvent } from "../output/describe-sections.ts";
import { spanText } from "./columns.ts";
import { jobOrder } from "./job-order.ts";

const SYMBOL: Record<string, string> = {
  Succeeded: "✓",
  Failed: "✗",
  Running: "●",
  Pending: "○",
  Cancelled: "⊘",
  Skipped: "–",
};

/** One table cell: its plain text (for widths) and how to colour it once padded. */
interface Cell {
  text: string;
  colour?: (padded: string) => string;
}
type Line = { row: Cell[] } | { free: string };

export interface DescribeOptions {
  nowMs: number;
  paint?: Paint;
}

export function describeWorkflowRun(
  wfr: WorkflowRun,
  events: readonly KubeEvent[],
  o: DescribeOptions,
): string {
  const p = o.paint ?? paint(false);
  const out: string[] = [];
  const field = (k: string, v: string | number | undefined) => {
    if (v !== undefined && v !== "") out.push(`${`${k}:`.padEnd(22)}${v}`);
  };
  const m = wfr.metadata;
  const s = wfr.status ?? {};
  const phase = s.phase ?? "Pending";
  field("Name", m.name);
  field("Namespace", m.namespace);
  field("Workflow", wfr.spec.workflowRef?.name ?? "(inline)");
  const parent = m.labels?.[Labels.workflowRun];
  if (parent) field("Parent", `WorkflowRun ${parent}, job ${m.labels?.[Labels.workflowJob] ?? "?"}`);
  field(
    "Created",
    m.creationTimestamp ? `${m.creationTimestamp} (${humanAge(m.creationTimestamp, o.nowMs)} ago)` : "",
  );
  field("Inputs", pairs(wfr.spec.inputs));
  field("Phase", paintPhase(p, phase));
  field("Reason", s.reason);
  field("Message", s.message);
  if (s.depth) field("Depth", s.depth);
  field("Started", s.startTime);
  field("Completed", s.completionTime);
  field("Duration", spanText(s.startTime, s.completionTime, o.nowMs));
  if (wfr.spec.termination?.mode)
    field(
      "Termination",
      `${wfr.spec.termination.mode}${s.completionTime ? "" : " (cancelling: running children are stopped, nothing new starts)"}`,
    );
  const defs = s.definitions ?? wfr.spec.definitions;
  if (defs) {
    const names = [
      ...Object.keys(defs.workflows ?? {}).map((n) => `workflow ${n}`),
      ...Object.keys(defs.actions ?? {}).map((n) => `action ${n}`),
    ];
    if (names.length) field("Frozen definitions", names.join(", "));
  }

  out.push("Jobs:");
  out.push(...renderJobs(wfr, o.nowMs, p).map((l) => `  ${l}`));
  out.push("Outputs:");
  const outs = Object.entries(s.outputs ?? {});
  if (outs.length === 0)
    out.push(`  ${s.completionTime ? "<none>" : "<not yet: set when the run succeeds>"}`);
  else for (const [k, v] of outs) out.push(`  ${k}=${v}`);
  out.push(...conditionsSection(s.conditions ?? [], o.nowMs), ...eventsSection(events, o.nowMs));
  return out.join("\n");
}

/** The DAG as an aligned tree: a header row, a row per job and per step, free lines for details. */
export function renderJobs(wfr: WorkflowRun, nowMs: number, p: Paint = paint(false)): string[] {
  const lines: Line[] = [
    { row: ["JOB / STEP", "NEEDS", "PHASE", "DURATION", "RUN", "EXIT", "REASON"].map((t) => ({ text: t })) },
  ];
  const specJobs = wfr.spec.jobs ?? {};
  for (const name of jobOrder(specJobs)) {
    const spec = specJobs[name] as WorkflowJob;
    const st = wfr.status?.jobs?.[name];
    lines.push(...jobLines(name, spec, st, nowMs, p));
  }
  return renderLines(lines);
}

function jobLines(
  name: string,
  spec: WorkflowJob,
  st: JobStatus | undefined,
  nowMs: number,
  p: Paint,
): Line[] {
  const phase = st?.phase ?? "Pending";
  const lines: Line[] = [
    {
      row: [
        { text: `${SYMBOL[phase] ?? "?"} ${name}`, colour: (t) => colourSymbol(p, phase, t) },
        { text: (spec.needs ?? []).join(",") },
        { text: phase, colour: (t) => paintPhase(p, phase) + t.slice(phase.length) },
        { text: spanText(st?.startTime, st?.completionTime, nowMs) },
        { text: st?.workflowRun ?? "" },
        { text: "" },
        { text: reasonText(st?.reason, st?.message) },
      ],
    },
  ];
  const details: string[] = [];
  if (spec.uses)
    details.push(
      `uses Workflow ${spec.uses}${pairs(spec.with) ? ` with ${pairs(spec.with)}` : ""}${st?.workflowRun ? ` → WorkflowRun ${st.workflowRun} (krt wfrun describe ${st.workflowRun})` : " (nested WorkflowRun not created yet)"}`,
    );
  if (st?.workspace) details.push(`workspace ${st.workspace}`);
  if (st?.outputs && Object.keys(st.outputs).length) details.push(`outputs: ${pairs(st.outputs)}`);
  for (const a of st?.artifacts ?? [])
    details.push(
      `artifact ${a.name}: ${a.type}${a.size !== undefined ? `, ${a.size} bytes` : ""}, ${a.location}`,
    );
  const steps = stepsOf(spec, st);
  for (const d of details) lines.push({ free: `${steps.length ? "│" : " "}   ${p.dim(d)}` });
  steps.forEach((step, i) => {
    lines.push(...stepLines(step, i === steps.length - 1, nowMs, p));
  });
  return lines;
}

/** The status's steps once the controller wrote them; before that, the spec's, all Pending. */
function stepsOf(spec: WorkflowJob, st: JobStatus | undefined): StepStatus[] {
  if (st?.steps?.length) return st.steps;
  return (spec.steps ?? []).map((s) => ({
    name: s.name,
    phase: "Pending" as const,
    ...(s.uses ? { action: s.uses } : {}),
  }));
}

function stepLines(step: StepStatus, last: boolean, nowMs: number, p: Paint): Line[] {
  const phase = step.phase;
  const branch = last ? "└─ " : "├─ ";
  const label = `${SYMBOL[phase] ?? "?"} ${step.name}${step.action ? ` (${step.action})` : ""}`;
  const run = step.run ? `${step.run}${step.attempt && step.attempt > 1 ? `#${step.attempt}` : ""}` : "";
  const lines: Line[] = [
    {
      row: [
        {
          text: `${branch}${label}`,
          colour: (t) => p.dim(branch) + colourSymbol(p, phase, t.slice(branch.length)),
        },
        { text: "" },
        { text: phase, colour: (t) => paintPhase(p, phase) + t.slice(phase.length) },
        { text: spanText(step.startTime, step.completionTime, nowMs) },
        { text: run },
        { text: step.exitCode !== undefined ? String(step.exitCode) : "" },
        { text: reasonText(step.reason, step.message) },
      ],
    },
  ];
  if (step.outputs && Object.keys(step.outputs).length)
    lines.push({ free: `${last ? " " : "│"}     ${p.dim(`outputs: ${pairs(step.outputs)}`)}` });
  return lines;
}

/** The symbol at the start of `t` in the phase's colour. */
function colourSymbol(p: Paint, phase: string, t: string): string {
  const sym = SYMBOL[phase] ?? "?";
  return t.startsWith(sym) ? paintPhase(p, phase).replace(phase, sym) + t.slice(sym.length) : t;
}

function reasonText(reason: string | undefined, message: string | undefined): string {
  if (reason === "Succeeded" && !message) return "";
  if (reason && message) return `${reason}: ${message}`;
  return reason ?? message ?? "";
}

/** Rows padded to the widest cell of each column (the last column not padded); free lines as they are. */
function renderLines(lines: readonly Line[]): string[] {
  const rows = lines.flatMap((l) => ("row" in l ? [l.row] : []));
  const n = Math.max(...rows.map((r) => r.length));
  const widths = [...Array(n).keys()].map((i) =>
    Math.max(...rows.map((r) => [...(r[i]?.text ?? "")].length)),
  );
  return lines.map((l) => {
    if ("free" in l) return l.free;
    return l.row
      .map((c, i) => {
        const padded =
          i === l.row.length - 1 ? c.text : c.text + " ".repeat((widths[i] ?? 0) - [...c.text].length);
        return c.colour ? c.colour(padded) : padded;
      })
      .join("  ")
      .trimEnd();
  });
}

function pairs(m: Readonly<Record<string, string>> | undefined): string {
  return Object.entries(m ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
}
