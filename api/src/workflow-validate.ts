/**
 * The rules of workflows that the CRD schemas cannot express: the job graph (no cycle, `needs`
 * known), which values an expression may see where it is written, staged artifacts from upstream
 * jobs that declare them, input names and types. Used by the admission webhook (reject at create),
 * by the controller before it creates any child (definitions may have changed since), and by
 * `krt workflow trigger`.
 */
import { Limits } from "./constants.ts";
import {
  type ActionSpec,
  type InputDeclaration,
  RELATIVE_PATH_PATTERN,
  WORKFLOW_KEY_PATTERN,
  type WorkflowDefinitions,
  type WorkflowJob,
  WorkflowLimits,
  type WorkflowSpec,
  type WorkflowStep,
} from "./workflow.ts";
import { ExpressionError, parseTemplate, type Reference, referenceText } from "./workflow-expr.ts";

export interface Issue {
  /** Where, as a field path (`spec.jobs.build.steps[0].run`). */
  path: string;
  message: string;
}

export class WorkflowInvalid extends Error {
  override name = "WorkflowInvalid";
  constructor(readonly issues: Issue[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join("; "));
  }
}

const KEY = new RegExp(WORKFLOW_KEY_PATTERN);
const REL_PATH = new RegExp(RELATIVE_PATH_PATTERN);

/** Jobs in an order where every job comes after what it needs; throws on a cycle, naming it. */
export function topologicalOrder(jobs: Record<string, Pick<WorkflowJob, "needs">>): string[] {
  const order: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (j: string, trail: string[]) => {
    const s = state.get(j);
    if (s === "done") return;
    if (s === "visiting") {
      const cycle = [...trail.slice(trail.indexOf(j)), j];
      throw new WorkflowInvalid([
        { path: `spec.jobs.${j}.needs`, message: `jobs form a cycle: ${cycle.join(" → ")}` },
      ]);
    }
    state.set(j, "visiting");
    for (const n of jobs[j]?.needs ?? []) if (n in jobs) visit(n, [...trail, j]);
    state.set(j, "done");
    order.push(j);
  };
  for (const j of Object.keys(jobs).sort()) visit(j, []);
  return order;
}

/** Every job's upstream jobs (what it needs, directly or not). Assumes no cycle. */
export function upstreamJobs(jobs: Record<string, Pick<WorkflowJob, "needs">>): Map<string, Set<string>> {
  const up = new Map<string, Set<string>>();
  for (const j of topologicalOrder(jobs)) {
    const s = new Set<string>();
    for (const n of jobs[j]?.needs ?? []) {
      s.add(n);
      for (const u of up.get(n) ?? []) s.add(u);
    }
    up.set(j, s);
  }
  return up;
}

interface ExprContext {
  /** Input names visible (undefined: not checked). */
  inputs?: ReadonlySet<string>;
  /** Jobs whose outputs may be referenced, with their output names when known. */
  jobs?: ReadonlyMap<string, ReadonlySet<string> | undefined>;
  /** Steps whose outputs may be referenced, with their output names when known. */
  steps?: ReadonlyMap<string, ReadonlySet<string> | undefined>;
  /** What to say a job/step reference may see here. */
  jobsWhy?: string;
  stepsWhy?: string;
}

function checkExpr(value: string, path: string, ctx: ExprContext, issues: Issue[]): void {
  let parts: ReturnType<typeof parseTemplate>;
  try {
    parts = parseTemplate(value);
  } catch (e) {
    if (e instanceof ExpressionError) {
      issues.push({ path, message: e.message });
      return;
    }
    throw e;
  }
  for (const p of parts) {
    if (typeof p === "string") continue;
    const problem = referenceProblem(p, ctx);
    if (problem) issues.push({ path, message: `\${{ ${referenceText(p)} }}: ${problem}` });
  }
}

function referenceProblem(r: Reference, ctx: ExprContext): string | undefined {
  switch (r.kind) {
    case "inputs":
      if (ctx.inputs && !ctx.inputs.has(r.key))
        return ctx.inputs.size
          ? `no input "${r.key}" (inputs: ${[...ctx.inputs].sort().join(", ")})`
          : `no input "${r.key}": none are declared or given`;
      return undefined;
    case "jobs": {
      if (!ctx.jobs) return "job outputs cannot be used here";
      if (!ctx.jobs.has(r.job)) return `job "${r.job}" ${ctx.jobsWhy ?? "is not visible here"}`;
      const keys = ctx.jobs.get(r.job);
      if (keys && !keys.has(r.key)) return `job "${r.job}" has no output "${r.key}"`;
      return undefined;
    }
    case "steps": {
      if (!ctx.steps) return "step outputs cannot be used here";
      if (!ctx.steps.has(r.step)) return `step "${r.step}" ${ctx.stepsWhy ?? "is not visible here"}`;
      const keys = ctx.steps.get(r.step);
      if (keys && !keys.has(r.key))
        return keys.size
          ? `step "${r.step}" declares no output "${r.key}" (outputs: ${[...keys].sort().join(", ")})`
          : `step "${r.step}" declares no outputs (list them in its \`outputs\`)`;
      return undefined;
    }
    case "workflow":
      return undefined;
  }
}

function checkKeys(m: Record<string, unknown> | undefined, path: string, what: string, issues: Issue[]) {
  for (const k of Object.keys(m ?? {})) {
    if (!KEY.test(k) || k.length > Limits.outputNameLength)
      issues.push({
        path: `${path}.${k}`,
        message: `${what} names are letters, digits, '_', '.' and '-', not starting with a digit or '-', at most ${Limits.outputNameLength} characters`,
      });
  }
}

/** Outputs a step makes visible: declared ones, or the called Action's. */
function stepOutputs(step: WorkflowStep, defs: Definitions): ReadonlySet<string> | undefined {
  if (step.uses) {
    const a = defs.actions?.[step.uses];
    return a ? new Set(Object.keys(a.outputs ?? {})) : undefined;
  }
  return new Set(step.outputs ?? []);
}

/** Artifacts a job's steps declare (Actions included when known). */
function jobArtifacts(job: WorkflowJob, defs: Definitions): Set<string> | undefined {
  const out = new Set<string>();
  for (const s of job.steps ?? []) {
    if (s.uses) {
      const a = defs.actions?.[s.uses];
      if (!a) return undefined;
      for (const as of a.steps) for (const n of as.artifacts ?? []) out.add(n);
    } else for (const n of s.artifacts ?? []) out.add(n);
  }
  return out;
}

type Definitions = Partial<WorkflowDefinitions>;

export interface JobsShape {
  inputs: ReadonlySet<string> | undefined;
  runtime?: string;
  env?: { name: string; value: string }[];
  jobs: Record<string, WorkflowJob>;
  outputs?: Record<string, string>;
}

/**
 * The graph and expression rules of a set of jobs (a WorkflowRun's or a Workflow's). `defs`, when
 * given, also checks what `uses` calls: Actions' outputs and artifacts, and `with` against inputs.
 */
export function validateJobs(shape: JobsShape, base: string, defs: Definitions = {}): Issue[] {
  const issues: Issue[] = [];
  let up: Map<string, Set<string>>;
  try {
    up = upstreamJobs(shape.jobs);
  } catch (e) {
    if (e instanceof WorkflowInvalid)
      return e.issues.map((i) => ({ ...i, path: `${base}${i.path.slice(4)}` }));
    throw e;
  }
  for (const [name, job] of Object.entries(shape.jobs)) {
    for (const n of job.needs ?? [])
      if (!(n in shape.jobs)) issues.push({ path: `${base}.jobs.${name}.needs`, message: `no job "${n}"` });
  }
  const jobOutputs = (j: string): ReadonlySet<string> | undefined => {
    const job = shape.jobs[j]!;
    if (job.uses) {
      const w = defs.workflows?.[job.uses];
      return w ? new Set(Object.keys(w.outputs ?? {})) : undefined;
    }
    return new Set(Object.keys(job.outputs ?? {}));
  };
  const inputsOnly: ExprContext = { inputs: shape.inputs };
  for (const e of shape.env ?? []) checkExpr(e.value, `${base}.env[${e.name}]`, inputsOnly, issues);

  for (const [name, job] of Object.entries(shape.jobs)) {
    const jp = `${base}.jobs.${name}`;
    const upstream = up.get(name) ?? new Set<string>();
    const jobsCtx = new Map([...upstream].map((u) => [u, jobOutputs(u)] as const));
    const jobsWhy = "is not upstream of this job: add it to `needs`";
    const ctx = (steps?: Map<string, ReadonlySet<string> | undefined>): ExprContext => ({
      inputs: shape.inputs,
      jobs: jobsCtx,
      jobsWhy,
      ...(steps ? { steps, stepsWhy: "is not an earlier step of this job" } : {}),
    });
    for (const e of job.env ?? []) checkExpr(e.value, `${jp}.env[${e.name}]`, ctx(), issues);
    checkKeys(job.with, `${jp}.with`, "input", issues);
    checkKeys(job.outputs, `${jp}.outputs`, "output", issues);
    for (const [k, v] of Object.entries(job.with ?? {})) checkExpr(v, `${jp}.with.${k}`, ctx(), issues);
    if (job.uses) {
      const w = defs.workflows?.[job.uses];
      if (w) issues.push(...checkWith(job.with, w.inputs, `${jp}.with`, `Workflow ${job.uses}`));
      continue;
    }
    const steps = job.steps ?? [];
    const seen = new Map<string, ReadonlySet<string> | undefined>();
    let expanded = 0;
    steps.forEach((s, i) => {
      const sp = `${jp}.steps[${i}]`;
      const c = ctx(new Map(seen));
      if (s.run !== undefined) checkExpr(s.run, `${sp}.run`, c, issues);
      for (const e of s.env ?? []) checkExpr(e.value, `${sp}.env[${e.name}]`, c, issues);
      checkKeys(s.with, `${sp}.with`, "input", issues);
      for (const [k, v] of Object.entries(s.with ?? {})) checkExpr(v, `${sp}.with.${k}`, c, issues);
      if (s.uses) {
        const a = defs.actions?.[s.uses];
        if (a) {
          issues.push(...checkWith(s.with, a.inputs, `${sp}.with`, `Action ${s.uses}`));
          expanded += a.steps.length;
        } else expanded += 1;
      } else expanded += 1;
      seen.set(s.name, stepOutputs(s, defs));
    });
    if (expanded > WorkflowLimits.expandedStepsPerJob)
      issues.push({
        path: `${jp}.steps`,
        message: `${expanded} steps once Actions are expanded; at most ${WorkflowLimits.expandedStepsPerJob}`,
      });
    for (const [k, v] of Object.entries(job.outputs ?? {}))
      checkExpr(v, `${jp}.outputs.${k}`, { ...ctx(seen), stepsWhy: "is not a step of this job" }, issues);
    (job.artifacts ?? []).forEach((a, i) => {
      const ap = `${jp}.artifacts[${i}]`;
      const m = /^jobs\.([a-z0-9-]+)\.artifacts\.(.+)$/.exec(a.from);
      const src = m?.[1] ?? "";
      const art = m?.[2] ?? "";
      if (
        a.path !== undefined &&
        (!REL_PATH.test(a.path) || a.path.split("/").some((p) => p === "." || p === ".."))
      )
        issues.push({
          path: `${ap}.path`,
          message: "a path relative to the workspace, without '.' or '..' segments",
        });
      if (!upstream.has(src)) {
        issues.push({
          path: `${ap}.from`,
          message: `job "${src}" is not upstream of this job: add it to \`needs\``,
        });
        return;
      }
      const srcJob = shape.jobs[src]!;
      if (srcJob.uses) {
        issues.push({
          path: `${ap}.from`,
          message: `job "${src}" calls Workflow ${srcJob.uses}: its artifacts stay inside that WorkflowRun; pass values through outputs`,
        });
        return;
      }
      const declared = jobArtifacts(srcJob, defs);
      if (declared && !declared.has(art))
        issues.push({
          path: `${ap}.from`,
          message: `no step of job "${src}" declares artifact "${art}" (list it in the step's \`artifacts\`)`,
        });
    });
  }
  checkKeys(shape.outputs, `${base}.outputs`, "output", issues);
  for (const [k, v] of Object.entries(shape.outputs ?? {}))
    checkExpr(
      v,
      `${base}.outputs.${k}`,
      {
        inputs: shape.inputs,
        jobs: new Map(Object.keys(shape.jobs).map((j) => [j, jobOutputs(j)] as const)),
        jobsWhy: "is not a job of this workflow",
      },
      issues,
    );
  return issues;
}

/** `with` keys against declared inputs: unknown keys, missing required ones, constant types. */
export function checkWith(
  given: Record<string, string> | undefined,
  decls: Record<string, InputDeclaration> | undefined,
  path: string,
  callee: string,
): Issue[] {
  const issues: Issue[] = [];
  const known = Object.keys(decls ?? {}).sort();
  for (const [k, v] of Object.entries(given ?? {})) {
    const d = decls?.[k];
    if (!d) {
      issues.push({
        path: `${path}.${k}`,
        message: `${callee} has no input "${k}"${known.length ? ` (inputs: ${known.join(", ")})` : " (it declares none)"}`,
      });
      continue;
    }
    if (!v.includes("${{")) {
      const problem = typeProblem(v, d);
      if (problem) issues.push({ path: `${path}.${k}`, message: problem });
    }
  }
  for (const [k, d] of Object.entries(decls ?? {}))
    if (d.required && given?.[k] === undefined)
      issues.push({ path, message: `${callee} needs input "${k}"` });
  return issues;
}

function typeProblem(value: string, d: InputDeclaration): string | undefined {
  if (d.type === "number" && !/^-?[0-9]+(\.[0-9]+)?$/.test(value)) return `"${value}" is not a number`;
  if (d.type === "boolean" && value !== "true" && value !== "false") return `"${value}" is not true or false`;
  return undefined;
}

/**
 * The values a callee sees: the given ones (already evaluated) checked against the declarations,
 * defaults filled in. Throws WorkflowInvalid naming every problem.
 */
export function bindInputs(
  given: Record<string, string> | undefined,
  decls: Record<string, InputDeclaration> | undefined,
  callee: string,
  path = "with",
): Record<string, string> {
  const issues = checkWith(given, decls, path, callee);
  for (const [k, v] of Object.entries(given ?? {})) {
    const d = decls?.[k];
    const problem = d && typeProblem(v, d);
    if (problem && !issues.some((i) => i.path === `${path}.${k}`))
      issues.push({ path: `${path}.${k}`, message: problem });
  }
  if (issues.length) throw new WorkflowInvalid(issues);
  const out: Record<string, string> = {};
  for (const [k, d] of Object.entries(decls ?? {})) {
    const v = given?.[k] ?? d.default;
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** A reusable Workflow on its own (inputs are its declarations). */
export function validateWorkflowSpec(spec: WorkflowSpec, base = "spec", defs: Definitions = {}): Issue[] {
  const issues: Issue[] = [];
  checkKeys(spec.inputs, `${base}.inputs`, "input", issues);
  issues.push(...validateJobs({ ...spec, inputs: new Set(Object.keys(spec.inputs ?? {})) }, base, defs));
  return issues;
}

/** A reusable Action: inputs, its own steps' outputs, no jobs. */
export function validateActionSpec(spec: ActionSpec, base = "spec"): Issue[] {
  const issues: Issue[] = [];
  checkKeys(spec.inputs, `${base}.inputs`, "input", issues);
  const inputs = new Set(Object.keys(spec.inputs ?? {}));
  const seen = new Map<string, ReadonlySet<string> | undefined>();
  spec.steps.forEach((s, i) => {
    const sp = `${base}.steps[${i}]`;
    if ((s as { uses?: string }).uses !== undefined)
      issues.push({ path: `${sp}.uses`, message: "an Action cannot call an Action" });
    const c: ExprContext = {
      inputs,
      steps: new Map(seen),
      stepsWhy: "is not an earlier step of this Action",
    };
    if (s.run !== undefined) checkExpr(s.run, `${sp}.run`, c, issues);
    for (const e of s.env ?? []) checkExpr(e.value, `${sp}.env[${e.name}]`, c, issues);
    seen.set(s.name, new Set(s.outputs ?? []));
  });
  checkKeys(spec.outputs, `${base}.outputs`, "output", issues);
  for (const [k, v] of Object.entries(spec.outputs ?? {}))
    checkExpr(
      v,
      `${base}.outputs.${k}`,
      { inputs, steps: seen, stepsWhy: "is not a step of this Action" },
      issues,
    );
  return issues;
}

/** A WorkflowRun: its inputs are the values given. Definitions in its spec are checked too. */
export function validateWorkflowRunSpec(
  spec: {
    inputs?: Record<string, string>;
    runtime?: string;
    env?: { name: string; value: string }[];
    jobs: Record<string, WorkflowJob>;
    outputs?: Record<string, string>;
    definitions?: Definitions;
  },
  extraDefs: Definitions = {},
): Issue[] {
  const issues: Issue[] = [];
  checkKeys(spec.inputs, "spec.inputs", "input", issues);
  // Values are substituted as they are: an expression (or a `$${{` escape) in one would never be
  // evaluated, so it is refused rather than passed on as puzzling text.
  for (const [k, v] of Object.entries(spec.inputs ?? {}))
    if (v.includes("${{"))
      issues.push({
        path: `spec.inputs.${k}`,
        message: "input values are plain text: `${{` is not evaluated (nor `$${{` unescaped) in them",
      });
  const defs: Definitions = {
    workflows: { ...extraDefs.workflows, ...spec.definitions?.workflows },
    actions: { ...extraDefs.actions, ...spec.definitions?.actions },
  };
  issues.push(...validateJobs({ ...spec, inputs: new Set(Object.keys(spec.inputs ?? {})) }, "spec", defs));
  for (const [n, w] of Object.entries(spec.definitions?.workflows ?? {}))
    issues.push(...validateWorkflowSpec(w, `spec.definitions.workflows.${n}`, defs));
  for (const [n, a] of Object.entries(spec.definitions?.actions ?? {}))
    issues.push(...validateActionSpec(a, `spec.definitions.actions.${n}`));
  return issues;
}

/** The Workflow and Action names a set of jobs calls. */
export function callsOf(jobs: Record<string, WorkflowJob>): { workflows: Set<string>; actions: Set<string> } {
  const workflows = new Set<string>();
  const actions = new Set<string>();
  for (const j of Object.values(jobs)) {
    if (j.uses) workflows.add(j.uses);
    for (const s of j.steps ?? []) if (s.uses) actions.add(s.uses);
  }
  return { workflows, actions };
}

/**
 * Resolves every Workflow and Action reachable from `jobs` (through `uses`, transitively) with
 * `fetch`, refusing cycles between Workflows (A → B → A) and nesting deeper than the limit.
 * Returns the frozen definitions. `fetch*` return undefined for a missing definition.
 */
export async function resolveDefinitions(
  jobs: Record<string, WorkflowJob>,
  known: Definitions,
  fetchWorkflow: (name: string) => Promise<WorkflowSpec | undefined>,
  fetchAction: (name: string) => Promise<ActionSpec | undefined>,
  depth: number,
): Promise<
  | { definitions: WorkflowDefinitions }
  | { reason: "DefinitionNotFound" | "InvalidWorkflow" | "DepthExceeded"; message: string }
> {
  const workflows: Record<string, WorkflowSpec> = {};
  const actions: Record<string, ActionSpec> = {};
  const getWorkflow = async (n: string) => known.workflows?.[n] ?? (await fetchWorkflow(n));
  const getAction = async (n: string) => known.actions?.[n] ?? (await fetchAction(n));
  const walk = async (
    js: Record<string, WorkflowJob>,
    trail: string[],
    level: number,
  ): Promise<
    { reason: "DefinitionNotFound" | "InvalidWorkflow" | "DepthExceeded"; message: string } | undefined
  > => {
    const calls = callsOf(js);
    for (const a of [...calls.actions].sort()) {
      if (actions[a]) continue;
      const spec = await getAction(a);
      if (!spec) return { reason: "DefinitionNotFound", message: `Action "${a}" not found in the namespace` };
      actions[a] = spec;
    }
    for (const w of [...calls.workflows].sort()) {
      if (trail.includes(w))
        return {
          reason: "InvalidWorkflow",
          message: `Workflows call each other in a cycle: ${[...trail, w].join(" → ")}`,
        };
      if (level + 1 > WorkflowLimits.maxDepth)
        return {
          reason: "DepthExceeded",
          message: `Workflow calls nest deeper than ${WorkflowLimits.maxDepth} levels: ${[...trail, w].join(" → ")}`,
        };
      const spec = workflows[w] ?? (await getWorkflow(w));
      if (!spec)
        return { reason: "DefinitionNotFound", message: `Workflow "${w}" not found in the namespace` };
      workflows[w] = spec;
      const deeper = await walk(spec.jobs, [...trail, w], level + 1);
      if (deeper) return deeper;
    }
    return undefined;
  };
  const failed = await walk(jobs, ["(this run)"], depth);
  if (failed) return failed;
  const count = Object.keys(workflows).length + Object.keys(actions).length;
  if (count > WorkflowLimits.definitions)
    return {
      reason: "InvalidWorkflow",
      message: `the run calls ${count} Workflows and Actions (transitively); at most ${WorkflowLimits.definitions} are frozen into one WorkflowRun`,
    };
  return { definitions: { workflows, actions } };
}
