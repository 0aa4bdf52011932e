/**
 * The WorkflowRun's calculation, pure: from the WorkflowRun (its frozen definitions in status) and
 * the children observed in the informers, the status it should have and the side effects that
 * are still missing — children to create, children to cancel, job workspaces to delete. Status is
 * derived from the children every time; what the status already recorded is used only for what
 * children no longer show (a terminal step whose Run was deleted by its TTL) and for timestamps
 * recorded once.
 */
import {
  type ActionSpec,
  type ActionStep,
  API_VERSION,
  type ArtifactInput,
  type ArtifactRef,
  bindInputs,
  type Condition,
  type EnvVar,
  ExpressionError,
  evaluate,
  evaluateMap,
  isTerminalPhase,
  JobPhase,
  type JobStatus,
  Labels,
  MANAGED_BY,
  type PersistentWorkspace,
  type Run,
  RunPhase,
  type Scope,
  StepPhase,
  type StepStatus,
  TerminationMode,
  WorkflowInvalid,
  type WorkflowJob,
  WorkflowPhase,
  WorkflowReason,
  type WorkflowRun,
  type WorkflowRunStatus,
  type WorkflowStep,
  WorkspacePhase,
} from "@kruntimes/api";
import { jobWorkspaceName, nestedRunName, stepRunName } from "./child-names.ts";

/** Annotations on children: the step they run, and a nested WorkflowRun's depth. */
export const WorkflowAnnotations = {
  step: "kruntimes.io/workflow-step",
  depth: "kruntimes.io/workflow-depth",
} as const;

export interface Observed {
  wfrun: WorkflowRun;
  /** Child Runs by name (owned by this WorkflowRun). */
  runs: ReadonlyMap<string, Run>;
  /** Nested WorkflowRuns by name. */
  children: ReadonlyMap<string, WorkflowRun>;
  /** Job workspaces by name. */
  workspaces: ReadonlyMap<string, PersistentWorkspace>;
  /** Children created by this process that the informer may not show yet. */
  expected(name: string): boolean;
  /** RFC 3339, for timestamps recorded the first time they are known. */
  now: string;
}

export type Create =
  | { kind: "Run"; obj: Run }
  | { kind: "WorkflowRun"; obj: WorkflowRun }
  | { kind: "PersistentWorkspace"; obj: PersistentWorkspace };

export interface Plan {
  status: WorkflowRunStatus;
  creates: Create[];
  /** Children to cancel (spec.termination.mode Immediate). */
  cancels: { kind: "Run" | "WorkflowRun"; name: string }[];
  /** Job workspaces to delete (their job settled). */
  deleteWorkspaces: string[];
  /** Look again after this long even without an event (a bounded wait inside the plan). */
  requeueAfterMs?: number;
}

/** Step failures that mean the pod (and so a pod-local workspace) went away. */
const POD_LOSS = new Set<string>(["PodGone", "PodTerminating", "PodUnhealthy"]);
/** How long a job waits for its workspace to turn Lost after a step lost its pod. */
const LOSS_GRACE_MS = 30_000;

const SETTLED: readonly string[] = [
  JobPhase.Succeeded,
  JobPhase.Failed,
  JobPhase.Cancelled,
  JobPhase.Skipped,
];
const settled = (p: string | undefined) => p !== undefined && SETTLED.includes(p);

/** One step of a job after its Action calls are expanded. */
interface ExpandedStep {
  /** The status name: `<step>` or `<step>.<action step>`. */
  name: string;
  /** The job-level step it belongs to. */
  caller: WorkflowStep;
  action?: { name: string; spec: ActionSpec; step: ActionStep };
}

function expand(job: WorkflowJob, actions: Record<string, ActionSpec>): ExpandedStep[] {
  const out: ExpandedStep[] = [];
  for (const s of job.steps ?? []) {
    if (!s.uses) {
      out.push({ name: s.name, caller: s });
      continue;
    }
    const spec = actions[s.uses];
    // resolveDefinitions froze every Action before the run started; a missing one is a bug upstream.
    if (!spec) throw new Error(`Action ${s.uses} is not in the frozen definitions`);
    for (const as of spec.steps)
      out.push({ name: `${s.name}.${as.name}`, caller: s, action: { name: s.uses, spec, step: as } });
  }
  return out;
}

function micros(us: number | undefined): string | undefined {
  return us ? new Date(Math.floor(us / 1000)).toISOString() : undefined;
}

function stepFromRun(
  run: Run,
  name: string,
  action: string | undefined,
  declared: { outputs: string[]; artifacts: string[] },
): StepStatus {
  const st = run.status ?? {};
  const base: StepStatus = {
    name,
    ...(action ? { action } : {}),
    run: run.metadata.name,
    phase: StepPhase.Pending,
    ...(st.attempt ? { attempt: st.attempt } : {}),
    ...(st.exitCode !== undefined ? { exitCode: st.exitCode } : {}),
    ...(micros(st.timing?.startedMicros) ? { startTime: micros(st.timing?.startedMicros) } : {}),
  };
  const phase = st.phase ?? RunPhase.Pending;
  if (!isTerminalPhase(phase)) {
    return { ...base, phase: phase === RunPhase.Running ? StepPhase.Running : StepPhase.Pending };
  }
  const end = micros(st.timing?.finishedMicros ?? st.timing?.reportedMicros);
  const done = { ...base, ...(end ? { completionTime: end } : {}) };
  if (phase === RunPhase.Succeeded) {
    const outputs: Record<string, string> = {};
    const missing: string[] = [];
    for (const k of declared.outputs) {
      const v = st.outputs?.[k];
      if (v === undefined) missing.push(`output "${k}"`);
      else outputs[k] = v;
    }
    const stored = new Set((st.artifactRefs ?? []).map((a) => a.name));
    for (const a of declared.artifacts) if (!stored.has(a)) missing.push(`artifact "${a}"`);
    if (missing.length)
      return {
        ...done,
        phase: StepPhase.Failed,
        reason: WorkflowReason.OutputMissing,
        message: `the step succeeded but did not write its declared ${missing.join(", ")} (outputs go to $KRUNTIME_OUTPUTS as key=value lines, artifacts into $KRUNTIME_ARTIFACTS_DIR)`,
      };
    return { ...done, phase: StepPhase.Succeeded, ...(declared.outputs.length ? { outputs } : {}) };
  }
  return {
    ...done,
    phase: phase === RunPhase.Cancelled ? StepPhase.Cancelled : StepPhase.Failed,
    ...(st.reason ? { reason: st.reason } : {}),
    ...(st.message ? { message: st.message.slice(0, 4096) } : {}),
  };
}

function finished(
  phase: string,
  reason: string,
  message: string,
  now: string,
  old?: Condition[],
): Condition[] {
  const prev = old?.find((c) => c.type === "Finished");
  const same = prev && prev.status === "True" && prev.reason === reason;
  return [
    {
      type: "Finished",
      status: "True",
      reason,
      message: message || phase,
      lastTransitionTime: same ? prev.lastTransitionTime : now,
    },
  ];
}

class Planner {
  readonly creates: Create[] = [];
  readonly cancels: Plan["cancels"] = [];
  readonly deleteWorkspaces: string[] = [];
  requeueAfterMs: number | undefined;
  private readonly w: WorkflowRun;
  private readonly ns: string;
  private readonly uid: string;
  private readonly name: string;
  private readonly cancelling: boolean;
  private readonly actions: Record<string, ActionSpec>;

  constructor(private readonly o: Observed) {
    this.w = o.wfrun;
    this.ns = this.w.metadata.namespace ?? "";
    this.uid = this.w.metadata.uid ?? "";
    this.name = this.w.metadata.name ?? "";
    this.cancelling = this.w.spec.termination?.mode === TerminationMode.Immediate;
    this.actions = this.w.status?.definitions?.actions ?? {};
  }

  private labels(job: string): Record<string, string> {
    return {
      [Labels.workflowRun]: this.name,
      [Labels.workflowJob]: job,
      [Labels.managedBy]: MANAGED_BY,
    };
  }

  private owner() {
    return [
      {
        apiVersion: API_VERSION,
        kind: "WorkflowRun",
        name: this.name,
        uid: this.uid,
        controller: true,
      },
    ];
  }

  private baseScope(jobOutputs: Record<string, Record<string, string> | undefined>): Scope {
    return {
      inputs: this.w.spec.inputs ?? {},
      jobs: jobOutputs,
      workflow: { name: this.name, namespace: this.ns },
    };
  }

  plan(): Plan {
    const spec = this.w.spec;
    const old = this.w.status ?? {};
    const jobs: Record<string, JobStatus> = {};
    const outputsOf: Record<string, Record<string, string> | undefined> = {};
    // Jobs in dependency order: a job's decision reads its needs' final status of this pass.
    for (const name of order(spec.jobs)) {
      const job = spec.jobs[name]!;
      const prev = old.jobs?.[name];
      const st = job.uses
        ? this.usesJob(name, job, prev, jobs, outputsOf)
        : this.stepsJob(name, job, prev, jobs, outputsOf);
      if (st.phase !== JobPhase.Pending && !st.startTime && st.phase !== JobPhase.Skipped)
        st.startTime = prev?.startTime ?? this.o.now;
      if (settled(st.phase)) st.completionTime = prev?.completionTime ?? this.o.now;
      jobs[name] = st;
      if (st.phase === JobPhase.Succeeded) outputsOf[name] = st.outputs ?? {};
    }
    const status: WorkflowRunStatus = {
      ...old,
      observedGeneration: this.w.metadata.generation ?? 0,
      jobs,
    };
    const all = Object.values(jobs);
    if (!all.every((j) => settled(j.phase))) {
      status.phase = WorkflowPhase.Running;
      delete status.reason;
      status.message = this.cancelling
        ? "cancelling: waiting for running steps to end"
        : runningMessage(jobs);
      return this.result(status);
    }
    const failed = Object.entries(jobs).filter(([, j]) => j.phase === JobPhase.Failed);
    const cancelled = all.some((j) => j.phase === JobPhase.Cancelled);
    if (failed.length) {
      this.end(
        status,
        WorkflowPhase.Failed,
        WorkflowReason.JobFailed,
        `job${failed.length > 1 ? "s" : ""} ${failed.map(([n, j]) => `${n} (${j.message ?? j.reason ?? "failed"})`).join(", ")} failed`,
      );
    } else if (cancelled || this.cancelling) {
      this.end(
        status,
        WorkflowPhase.Cancelled,
        WorkflowReason.Cancelled,
        "cancelled: running steps were cancelled, nothing new started",
      );
    } else {
      try {
        const outputs = evaluateMap(spec.outputs, this.baseScope(outputsOf));
        if (outputs) status.outputs = outputs;
        this.end(
          status,
          WorkflowPhase.Succeeded,
          WorkflowReason.Succeeded,
          `${all.length} job${all.length > 1 ? "s" : ""} succeeded`,
        );
      } catch (e) {
        if (!(e instanceof ExpressionError)) throw e;
        this.end(status, WorkflowPhase.Failed, WorkflowReason.ExpressionFailed, `spec.outputs: ${e.message}`);
      }
    }
    return this.result(status);
  }

  private end(status: WorkflowRunStatus, phase: WorkflowPhase, reason: WorkflowReason, message: string) {
    const prevDone = this.w.status?.phase === phase ? this.w.status.completionTime : undefined;
    status.phase = phase;
    status.reason = reason;
    status.message = message.slice(0, 4096);
    status.completionTime = prevDone ?? this.o.now;
    status.conditions = finished(phase, reason, status.message, this.o.now, this.w.status?.conditions);
  }

  private result(status: WorkflowRunStatus): Plan {
    return {
      status,
      creates: this.creates,
      cancels: this.cancels,
      deleteWorkspaces: this.deleteWorkspaces,
      ...(this.requeueAfterMs !== undefined ? { requeueAfterMs: this.requeueAfterMs } : {}),
    };
  }

  /** Pending, Skipped or Cancelled before it starts; undefined when it may run. */
  private gate(
    _name: string,
    job: WorkflowJob,
    jobs: Record<string, JobStatus>,
    started: boolean,
  ): JobStatus | undefined {
    if (started) return undefined;
    const needs = job.needs ?? [];
    const notOk = needs.filter((n) => settled(jobs[n]?.phase) && jobs[n]?.phase !== JobPhase.Succeeded);
    if (notOk.length)
      return {
        phase: JobPhase.Skipped,
        reason: WorkflowReason.DependencyFailed,
        message: `skipped: ${notOk.map((n) => `${n} ${jobs[n]?.phase?.toLowerCase()}`).join(", ")}`,
      };
    if (this.cancelling)
      return {
        phase: JobPhase.Cancelled,
        reason: WorkflowReason.Cancelled,
        message: "cancelled before it started",
      };
    const waiting = needs.filter((n) => jobs[n]?.phase !== JobPhase.Succeeded);
    if (waiting.length) return { phase: JobPhase.Pending, message: `waiting for ${waiting.join(", ")}` };
    return undefined;
  }

  private usesJob(
    name: string,
    job: WorkflowJob,
    prev: JobStatus | undefined,
    jobs: Record<string, JobStatus>,
    outputsOf: Record<string, Record<string, string> | undefined>,
  ): JobStatus {
    if (prev && settled(prev.phase)) return prev;
    const childName = nestedRunName(this.name, this.uid, name);
    const child = this.o.children.get(childName);
    const started = child !== undefined || prev?.workflowRun !== undefined;
    const gated = this.gate(name, job, jobs, started);
    if (gated) return gated;
    const base: JobStatus = {
      phase: JobPhase.Running,
      workflowRun: childName,
      ...(prev?.startTime ? { startTime: prev.startTime } : {}),
    };
    if (!child) {
      if (prev?.workflowRun && !this.o.expected(childName))
        return {
          ...base,
          phase: JobPhase.Failed,
          reason: WorkflowReason.ChildDeleted,
          message: `WorkflowRun ${childName} was deleted before it ended`,
        };
      if (prev?.workflowRun) return base;
      const wf = this.w.status?.definitions?.workflows?.[job.uses!];
      if (!wf) throw new Error(`Workflow ${job.uses} is not in the frozen definitions`);
      let inputs: Record<string, string>;
      try {
        inputs = bindInputs(
          evaluateMap(job.with, this.baseScope(outputsOf)),
          wf.inputs,
          `Workflow ${job.uses}`,
          `spec.jobs.${name}.with`,
        );
      } catch (e) {
        return { ...base, phase: JobPhase.Failed, ...evaluationFailure(e) };
      }
      const depth = (this.w.status?.depth ?? 0) + 1;
      this.creates.push({
        kind: "WorkflowRun",
        obj: {
          apiVersion: API_VERSION,
          kind: "WorkflowRun",
          metadata: {
            name: childName,
            namespace: this.ns,
            labels: this.labels(name),
            annotations: { [WorkflowAnnotations.depth]: String(depth) },
            ownerReferences: this.owner(),
          },
          spec: {
            workflowRef: { name: job.uses! },
            ...(Object.keys(inputs).length ? { inputs } : {}),
            ...(wf.runtime ? { runtime: wf.runtime } : {}),
            ...(wf.env ? { env: wf.env } : {}),
            jobs: wf.jobs,
            ...(wf.outputs ? { outputs: wf.outputs } : {}),
            definitions: this.w.status?.definitions ?? {},
          },
        },
      });
      return { ...base, message: `started WorkflowRun ${childName}` };
    }
    const cp = child.status?.phase;
    if (cp === WorkflowPhase.Succeeded)
      return {
        ...base,
        phase: JobPhase.Succeeded,
        outputs: child.status?.outputs ?? {},
        message: `WorkflowRun ${childName} succeeded`,
      };
    if (cp === WorkflowPhase.Failed)
      return {
        ...base,
        phase: JobPhase.Failed,
        reason: WorkflowReason.CalledWorkflowFailed,
        message: `WorkflowRun ${childName}: ${child.status?.message ?? "failed"}`.slice(0, 4096),
      };
    if (cp === WorkflowPhase.Cancelled)
      return {
        ...base,
        phase: JobPhase.Cancelled,
        reason: WorkflowReason.Cancelled,
        message: `WorkflowRun ${childName} was cancelled`,
      };
    if (this.cancelling && child.spec.termination?.mode !== TerminationMode.Immediate)
      this.cancels.push({ kind: "WorkflowRun", name: childName });
    return { ...base, message: `WorkflowRun ${childName} ${cp?.toLowerCase() ?? "pending"}` };
  }

  private stepsJob(
    name: string,
    job: WorkflowJob,
    prev: JobStatus | undefined,
    jobs: Record<string, JobStatus>,
    outputsOf: Record<string, Record<string, string> | undefined>,
  ): JobStatus {
    const steps = expand(job, this.actions);
    const wsName = jobWorkspaceName(this.name, this.uid, name);
    const ws = this.o.workspaces.get(wsName);
    // A settled job keeps its recorded result; only its workspace may still need deleting.
    if (prev && settled(prev.phase)) {
      if (ws && !ws.metadata.deletionTimestamp) this.deleteWorkspaces.push(wsName);
      return prev;
    }
    const names = steps.map((s) => stepRunName(this.name, this.uid, name, s.name));
    const started =
      names.some((n) => this.o.runs.has(n)) || ws !== undefined || (prev?.steps ?? []).some((s) => s.run);
    const gated = this.gate(name, job, jobs, started);
    if (gated) return gated;

    const recorded = new Map((prev?.steps ?? []).map((s) => [s.name, s]));
    const statuses: StepStatus[] = [];
    const jobScopeSteps: Record<string, Record<string, string> | undefined> = {};
    const actionSteps = new Map<string, Record<string, Record<string, string> | undefined>>();
    const actionInputs = new Map<string, Record<string, string>>();
    const scope = this.baseScope(outputsOf);
    let phase: JobPhase = JobPhase.Running;
    let reason: string | undefined;
    let message: string | undefined;
    const artifacts: ArtifactRef[] = [];
    let blocked = false;

    for (let i = 0; i < steps.length; i++) {
      const s = steps[i]!;
      const runName = names[i]!;
      const declared = s.action
        ? { outputs: s.action.step.outputs ?? [], artifacts: s.action.step.artifacts ?? [] }
        : { outputs: s.caller.outputs ?? [], artifacts: s.caller.artifacts ?? [] };
      if (blocked) {
        statuses.push({
          name: s.name,
          ...(s.action ? { action: s.action.name } : {}),
          phase: phase === JobPhase.Running ? StepPhase.Pending : StepPhase.Skipped,
        });
        continue;
      }
      const run = this.o.runs.get(runName);
      const rec = recorded.get(s.name);
      let st: StepStatus;
      if (run) st = stepFromRun(run, s.name, s.action?.name, declared);
      else if (
        rec &&
        (rec.phase === StepPhase.Succeeded ||
          rec.phase === StepPhase.Failed ||
          rec.phase === StepPhase.Cancelled)
      )
        st = rec;
      else if (rec?.run && !this.o.expected(runName))
        st = {
          ...rec,
          phase: StepPhase.Failed,
          reason: WorkflowReason.ChildDeleted,
          message: `Run ${runName} was deleted before it ended`,
        };
      else if (rec?.run) st = rec;
      else {
        // Not created yet: this is the step to start, unless the job is being cancelled.
        if (this.cancelling) {
          statuses.push({
            name: s.name,
            ...(s.action ? { action: s.action.name } : {}),
            phase: StepPhase.Cancelled,
          });
          phase = JobPhase.Cancelled;
          reason = WorkflowReason.Cancelled;
          message = "cancelled";
          blocked = true;
          continue;
        }
        if (ws?.status?.phase === WorkspacePhase.Lost) {
          st = { name: s.name, phase: StepPhase.Skipped };
        } else {
          st = this.startStep(
            name,
            job,
            s,
            i === 0,
            runName,
            wsName,
            scope,
            jobScopeSteps,
            actionSteps,
            actionInputs,
          );
        }
      }
      statuses.push(st);
      if (st.phase === StepPhase.Succeeded) {
        this.recordOutputs(s, st, jobScopeSteps, actionSteps, actionInputs, scope);
        // The Run's references; a Run gone by TTL leaves the ones the status recorded.
        const refs = run ? (run.status?.artifactRefs ?? []) : (prev?.artifacts ?? []);
        for (const a of refs) {
          if (declared.artifacts.includes(a.name) && !artifacts.some((x) => x.name === a.name))
            artifacts.push(a);
        }
        continue;
      }
      if (
        st.phase === StepPhase.Failed &&
        POD_LOSS.has(st.reason ?? "") &&
        ws?.status?.phase !== WorkspacePhase.Lost
      ) {
        // The step's pod went away: its workspace is about to be Lost. Wait (bounded) for that, so
        // the job says WorkspaceLost rather than a step failure that hides it.
        const waited = Date.parse(this.o.now) - Date.parse(st.completionTime ?? this.o.now);
        if (waited < LOSS_GRACE_MS) {
          this.requeueAfterMs = LOSS_GRACE_MS - waited;
          message = `step ${s.name} lost its pod (${st.reason}); waiting for the workspace's state`;
          blocked = true;
          continue;
        }
      }
      if (st.phase === StepPhase.Failed) {
        phase = JobPhase.Failed;
        reason =
          st.reason === WorkflowReason.ExpressionFailed || st.reason === WorkflowReason.InvalidWorkflow
            ? st.reason
            : WorkflowReason.StepFailed;
        message = `step ${s.name} failed${st.reason ? ` (${st.reason})` : ""}: ${st.message ?? ""}`.slice(
          0,
          4096,
        );
      } else if (st.phase === StepPhase.Cancelled) {
        phase = JobPhase.Cancelled;
        reason = WorkflowReason.Cancelled;
        message = `step ${s.name} was cancelled`;
      } else if (this.cancelling && run && run.spec.termination?.mode !== TerminationMode.Immediate) {
        this.cancels.push({ kind: "Run", name: runName });
      }
      blocked = true;
    }

    // Workspace: created with the first step; lost is shown, never hidden.
    const lost = ws?.status?.phase === WorkspacePhase.Lost;
    // Lost wins over the step failure it usually causes (the step's pod went away with it).
    if (lost && (phase === JobPhase.Running || phase === JobPhase.Failed)) {
      phase = JobPhase.Failed;
      reason = WorkflowReason.WorkspaceLost;
      message =
        `PersistentWorkspace ${wsName} was lost: ${ws?.status?.message ?? "its pod went away"}; the job's files are gone${message ? ` (${message})` : ""}`.slice(
          0,
          4096,
        );
      for (const st of statuses)
        if (st.run && (st.phase === StepPhase.Running || st.phase === StepPhase.Pending)) {
          const r = this.o.runs.get(st.run);
          if (
            r &&
            !isTerminalPhase(r.status?.phase ?? RunPhase.Pending) &&
            r.spec.termination?.mode !== TerminationMode.Immediate
          )
            this.cancels.push({ kind: "Run", name: st.run });
        }
    }
    if (!ws && !lost && phase === JobPhase.Running && !(prev?.workspace && !this.o.expected(wsName))) {
      this.creates.unshift({ kind: "PersistentWorkspace", obj: this.workspace(name, job, wsName) });
    } else if (!ws && prev?.workspace && !this.o.expected(wsName) && phase === JobPhase.Running) {
      phase = JobPhase.Failed;
      reason = WorkflowReason.WorkspaceLost;
      message = `PersistentWorkspace ${wsName} was deleted while the job ran; the job's files are gone`;
    }

    let outputs: Record<string, string> | undefined;
    if (phase === JobPhase.Running && statuses.every((s) => s.phase === StepPhase.Succeeded)) {
      try {
        outputs = evaluateMap(job.outputs, { ...scope, steps: jobScopeSteps }) ?? {};
        phase = JobPhase.Succeeded;
        reason = WorkflowReason.Succeeded;
        message = `${statuses.length} step${statuses.length > 1 ? "s" : ""} succeeded`;
      } catch (e) {
        if (!(e instanceof ExpressionError)) throw e;
        phase = JobPhase.Failed;
        reason = WorkflowReason.ExpressionFailed;
        message = `outputs: ${e.message}`;
      }
    }
    if (settled(phase) && ws && !ws.metadata.deletionTimestamp) this.deleteWorkspaces.push(wsName);
    const running = statuses.find((s) => s.phase === StepPhase.Running || s.phase === StepPhase.Pending);
    return {
      phase,
      ...(reason ? { reason } : {}),
      message: message ?? (running ? `step ${running.name} ${running.phase.toLowerCase()}` : "starting"),
      workspace: wsName,
      steps: statuses,
      ...(outputs && Object.keys(outputs).length ? { outputs } : {}),
      ...(artifacts.length ? { artifacts } : {}),
      ...(prev?.startTime ? { startTime: prev.startTime } : {}),
    };
  }

  private recordOutputs(
    s: ExpandedStep,
    st: StepStatus,
    jobScopeSteps: Record<string, Record<string, string> | undefined>,
    actionSteps: Map<string, Record<string, Record<string, string> | undefined>>,
    actionInputs: Map<string, Record<string, string>>,
    scope: Scope,
  ) {
    if (!s.action) {
      jobScopeSteps[s.name] = st.outputs ?? {};
      return;
    }
    const own = actionSteps.get(s.caller.name) ?? {};
    own[s.action.step.name] = st.outputs ?? {};
    actionSteps.set(s.caller.name, own);
    const last = s.action.spec.steps[s.action.spec.steps.length - 1]!;
    if (last.name === s.action.step.name) {
      // The Action's outputs, over its own steps, become the calling step's.
      jobScopeSteps[s.caller.name] =
        evaluateMap(s.action.spec.outputs, {
          inputs: actionInputs.get(s.caller.name) ?? {},
          steps: own,
          workflow: scope.workflow,
        }) ?? {};
    }
  }

  private startStep(
    job: string,
    spec: WorkflowJob,
    s: ExpandedStep,
    first: boolean,
    runName: string,
    wsName: string,
    scope: Scope,
    jobScopeSteps: Record<string, Record<string, string> | undefined>,
    actionSteps: Map<string, Record<string, Record<string, string> | undefined>>,
    actionInputs: Map<string, Record<string, string>>,
  ): StepStatus {
    const status: StepStatus = {
      name: s.name,
      ...(s.action ? { action: s.action.name } : {}),
      run: runName,
      phase: StepPhase.Pending,
    };
    const callerScope: Scope = { ...scope, steps: jobScopeSteps };
    let script: string;
    let env: EnvVar[];
    try {
      const envs = [
        ...(this.w.spec.env ?? []).map((e) => ({ e, sc: scope })),
        ...(spec.env ?? []).map((e) => ({ e, sc: scope })),
      ];
      if (s.action) {
        let inputs = actionInputs.get(s.caller.name);
        if (!inputs) {
          inputs = bindInputs(
            evaluateMap(s.caller.with, callerScope),
            s.action.spec.inputs,
            `Action ${s.action.name}`,
            `step ${s.caller.name} with`,
          );
          actionInputs.set(s.caller.name, inputs);
        }
        const own: Scope = { inputs, steps: actionSteps.get(s.caller.name) ?? {}, workflow: scope.workflow };
        for (const e of s.caller.env ?? []) envs.push({ e, sc: callerScope });
        for (const e of s.action.step.env ?? []) envs.push({ e, sc: own });
        script = evaluate(s.action.step.run!, own);
      } else {
        for (const e of s.caller.env ?? []) envs.push({ e, sc: callerScope });
        script = evaluate(s.caller.run!, callerScope);
      }
      const merged = new Map<string, string>();
      for (const { e, sc } of envs) merged.set(e.name, evaluate(e.value, sc));
      merged.set("KRUNTIME_WORKFLOW_RUN", this.name);
      merged.set("KRUNTIME_WORKFLOW_JOB", job);
      merged.set("KRUNTIME_WORKFLOW_STEP", s.name);
      env = [...merged].map(([name, value]) => ({ name, value }));
    } catch (e) {
      return { ...status, phase: StepPhase.Failed, ...evaluationFailure(e) };
    }
    const step = s.action?.step ?? s.caller;
    const artifactInputs: ArtifactInput[] = first ? this.staged(spec) : [];
    this.creates.push({
      kind: "Run",
      obj: {
        apiVersion: API_VERSION,
        kind: "Run",
        metadata: {
          name: runName,
          namespace: this.ns,
          labels: this.labels(job),
          annotations: { [WorkflowAnnotations.step]: s.name },
          ownerReferences: this.owner(),
        },
        spec: {
          runtime: spec.runtime ?? this.w.spec.runtime ?? "",
          mode: { task: {} },
          source: { inline: script },
          env,
          ...(step.timeout ? { timeout: step.timeout } : {}),
          ...(step.retryPolicy ? { retryPolicy: step.retryPolicy } : {}),
          workspace: { name: wsName },
          ...(artifactInputs.length ? { artifactInputs } : {}),
        },
      },
    });
    return status;
  }

  /** The first step's artifactInputs: each staged artifact from the upstream step Run that declares it. */
  private staged(job: WorkflowJob): ArtifactInput[] {
    const out: ArtifactInput[] = [];
    for (const a of job.artifacts ?? []) {
      const m = /^jobs\.([a-z0-9-]+)\.artifacts\.(.+)$/.exec(a.from);
      if (!m) continue;
      const [, src, art] = m as unknown as [string, string, string];
      const srcJob = this.w.spec.jobs[src];
      if (!srcJob) continue;
      for (const s of expand(srcJob, this.actions)) {
        const declares = s.action ? s.action.step.artifacts : s.caller.artifacts;
        if (declares?.includes(art)) {
          out.push({
            run: stepRunName(this.name, this.uid, src, s.name),
            name: art,
            path: a.path ?? art,
          });
        }
      }
    }
    return out;
  }

  private workspace(job: string, spec: WorkflowJob, name: string): PersistentWorkspace {
    return {
      apiVersion: API_VERSION,
      kind: "PersistentWorkspace",
      metadata: { name, namespace: this.ns, labels: this.labels(job), ownerReferences: this.owner() },
      spec: { runtime: spec.runtime ?? this.w.spec.runtime ?? "", reclaimPolicy: "Delete" },
    };
  }
}

/** An expression or input check that failed while evaluating: the reason and message; else rethrown. */
function evaluationFailure(e: unknown): { reason: WorkflowReason; message: string } {
  if (e instanceof ExpressionError) return { reason: WorkflowReason.ExpressionFailed, message: e.message };
  if (e instanceof WorkflowInvalid) return { reason: WorkflowReason.InvalidWorkflow, message: e.message };
  throw e;
}

function runningMessage(jobs: Record<string, JobStatus>): string {
  const running = Object.entries(jobs)
    .filter(([, j]) => j.phase === JobPhase.Running)
    .map(([n]) => n);
  return running.length ? `running ${running.join(", ")}` : "waiting";
}

function order(jobs: Record<string, WorkflowJob>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (j: string) => {
    if (seen.has(j)) return;
    seen.add(j);
    for (const n of jobs[j]?.needs ?? []) if (n in jobs) visit(n);
    out.push(j);
  };
  for (const j of Object.keys(jobs).sort()) visit(j);
  return out;
}

export function planWorkflowRun(o: Observed): Plan {
  return new Planner(o).plan();
}
