/**
 * Workflows: a `WorkflowRun` is one execution — jobs ordered by `needs`, each a sequence of steps,
 * each step an ordinary child Run — and `Workflow` / `Action` are reusable definitions it calls
 * with `uses:` + `with:`. Everything is built from the generic primitives (Runs, a job-local
 * PersistentWorkspace, artifacts between jobs): the scheduler and runtimed know nothing of it.
 *
 * The schemas reject what is locally ambiguous (job `uses` xor `steps`, step `uses` xor `run`,
 * unknown `needs`); graph-wide rules (cycles, references to jobs that are not upstream,
 * expression syntax) are checked by `validateWorkflowRun` (workflow-validate.ts) in the admission
 * webhook and again by the controller before any child exists.
 */
import type { Static } from "@sinclair/typebox";
import { type API_VERSION, Limits } from "./constants.ts";
import { EnvVarSchema, RetryPolicySchema, TerminationSchema } from "./run-spec.ts";
import { ArtifactRefSchema } from "./run-status.ts";
import { Conditions, Duration, ObjectName, ObservedGeneration } from "./schema/common.ts";
import { cel, celString, Int32, List, MapOf, Obj, Str, StringEnum, Type } from "./schema/kube.ts";
import type { ObjectMeta } from "./schema/meta.ts";

/** Bounds of the workflow kinds. */
export const WorkflowLimits = {
  jobs: 32,
  stepsPerJob: 32,
  /** Steps of a job after its Actions are expanded. */
  expandedStepsPerJob: 64,
  needs: 32,
  inputs: 32,
  withEntries: 32,
  outputs: 32,
  outputsPerStep: 32,
  artifactsPerStep: 32,
  stagedArtifacts: 32,
  /** Job and step names: they become part of child object names. */
  nameLength: 40,
  valueLength: 4096,
  /** Reusable definitions frozen in one WorkflowRun (and passed to its nested ones). */
  definitions: 32,
  /** WorkflowRuns nested through `uses: <workflow>`: the top-level one is depth 0. */
  maxDepth: 4,
} as const;

export const WorkflowPhase = {
  Pending: "Pending",
  Running: "Running",
  Succeeded: "Succeeded",
  Failed: "Failed",
  Cancelled: "Cancelled",
} as const;
export type WorkflowPhase = (typeof WorkflowPhase)[keyof typeof WorkflowPhase];

export const JobPhase = {
  Pending: "Pending",
  Running: "Running",
  Succeeded: "Succeeded",
  Failed: "Failed",
  Cancelled: "Cancelled",
  /** A job it needs did not succeed: it never ran. */
  Skipped: "Skipped",
} as const;
export type JobPhase = (typeof JobPhase)[keyof typeof JobPhase];

export const StepPhase = {
  Pending: "Pending",
  Running: "Running",
  Succeeded: "Succeeded",
  Failed: "Failed",
  Cancelled: "Cancelled",
  Skipped: "Skipped",
} as const;
export type StepPhase = (typeof StepPhase)[keyof typeof StepPhase];

/** Why a WorkflowRun, job or step is in its phase (a closed set). */
export const WorkflowReason = {
  Succeeded: "Succeeded",
  /** A definition broke a graph rule (cycle, unknown job, bad expression) or an input rule. */
  InvalidWorkflow: "InvalidWorkflow",
  /** A `uses:` names a Workflow or Action that does not exist. */
  DefinitionNotFound: "DefinitionNotFound",
  /** Nested Workflow calls deeper than the limit. */
  DepthExceeded: "DepthExceeded",
  /** A job (or, on a job, one of its steps) failed. */
  JobFailed: "JobFailed",
  StepFailed: "StepFailed",
  /** A job it needs did not succeed. */
  DependencyFailed: "DependencyFailed",
  /** The job's PersistentWorkspace was lost (its pod went away): its data is gone. */
  WorkspaceLost: "WorkspaceLost",
  /** A step succeeded without writing an output or artifact it declared. */
  OutputMissing: "OutputMissing",
  /** An expression could not be evaluated (e.g. an output that no step wrote). */
  ExpressionFailed: "ExpressionFailed",
  /** A child Run or WorkflowRun was deleted before it ended. */
  ChildDeleted: "ChildDeleted",
  /** The called Workflow failed (on a `uses:` job). */
  CalledWorkflowFailed: "CalledWorkflowFailed",
  Cancelled: "Cancelled",
} as const;
export type WorkflowReason = (typeof WorkflowReason)[keyof typeof WorkflowReason];

export const WORKFLOW_REASON_DESCRIPTIONS: Record<WorkflowReason, string> = {
  Succeeded: "Every job (or step) succeeded.",
  InvalidWorkflow:
    "The definition breaks a rule checked before anything runs: a cycle, an unknown job, a bad expression, a missing or mistyped input.",
  DefinitionNotFound: "A `uses:` names a Workflow or Action that does not exist in the namespace.",
  DepthExceeded: `Workflows call Workflows more than ${WorkflowLimits.maxDepth} levels deep.`,
  JobFailed: "At least one job failed; the others ran as far as their `needs` allowed.",
  StepFailed: "On a job: one of its steps failed (its child Run's reason is on the step).",
  DependencyFailed: "On a job: a job it needs did not succeed, so it was skipped.",
  WorkspaceLost: "On a job: its PersistentWorkspace was lost with its pod; the job's data is gone.",
  OutputMissing: "On a step: it succeeded without writing an output or artifact it declares.",
  ExpressionFailed: "An expression referred to a value that does not exist when it was evaluated.",
  ChildDeleted: "A child Run or WorkflowRun was deleted before it ended.",
  CalledWorkflowFailed: "On a `uses:` job: the WorkflowRun made for the called Workflow did not succeed.",
  Cancelled:
    "`spec.termination.mode: Immediate` was set: running children were cancelled, nothing new started.",
};

/** Job, step and Action/Workflow input names. */
export const WORKFLOW_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/** Input and output names (as outputs of Runs: letters, digits, `_`, `.`, `-`). */
export const WORKFLOW_KEY_PATTERN = "^[A-Za-z_][A-Za-z0-9_.-]*$";
/** A relative path of plain segments; `.` and `..` segments are refused by validateWorkflowRun. */
export const RELATIVE_PATH_PATTERN = "^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$";
/** `jobs.<job>.artifacts.<name>`: an artifact a step of an upstream job stored. */
export const ARTIFACT_REF_PATTERN = "^jobs\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\\.artifacts\\.[A-Za-z0-9._-]+$";

function keysRule(what: string, pattern: string, maxLength: number) {
  return cel(
    `self.all(k, size(k) <= ${maxLength} && k.matches(${celString(pattern)}))`,
    what === "job"
      ? `job names are lowercase letters, digits and '-', starting and ending with a letter or digit, at most ${maxLength} characters`
      : `${what} names are letters, digits, '_', '.' and '-', not starting with a digit or '-', at most ${maxLength} characters`,
  );
}

/** A string that may contain `${{ … }}` expressions. */
function Expr(description: string) {
  return Str(WorkflowLimits.valueLength, { description });
}

/**
 * Key names of these maps are checked by validateWorkflowRun (admission and controller), not by
 * CEL: the maps sit under jobs × steps, and CEL's cost estimate multiplies every nested bound.
 */
function ValueMap(description: string, max: number) {
  return MapOf(Expr("A value; may contain `${{ … }}` expressions."), max, { description });
}

function StepName(description: string) {
  return Str(WorkflowLimits.nameLength, { description, minLength: 1, pattern: WORKFLOW_NAME_PATTERN });
}

const EnvList = () =>
  List(EnvVarSchema, Limits.envCount, {
    description: "Environment variables; values may contain `${{ … }}` expressions.",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
  });

/** Shared by WorkflowRun/Workflow steps and Action steps (which may not `uses`). */
function stepProperties() {
  return {
    name: StepName(
      "Unique within the job; `${{ steps.<name>.outputs.<key> }}` refers to it. Lowercase letters, digits and `-`.",
    ),
    run: Type.Optional(
      Str(Limits.inlineSourceLength, {
        description:
          "The script, run by the job's Runtime in the job's workspace. `${{ … }}` expressions are replaced by their values (as text) before it runs; prefer passing values through `env`.",
        minLength: 1,
      }),
    ),
    env: Type.Optional(EnvList()),
    timeout: Type.Optional(
      Duration("Longest one attempt of this step may run (the child Run's spec.timeout)."),
    ),
    retryPolicy: Type.Optional(RetryPolicySchema),
    outputs: Type.Optional(
      List(
        Str(Limits.outputNameLength, { description: "An output name.", pattern: WORKFLOW_KEY_PATTERN }),
        WorkflowLimits.outputsPerStep,
        {
          description:
            "Outputs the step writes to `$KRUNTIME_OUTPUTS` and the workflow may use; a step that succeeds without one of them fails with OutputMissing.",
          "x-kubernetes-list-type": "set",
        },
      ),
    ),
    artifacts: Type.Optional(
      List(
        Str(Limits.nameLength, {
          description: "An artifact name (a top-level entry of `$KRUNTIME_ARTIFACTS_DIR`).",
          pattern: "^[A-Za-z0-9._-]+$",
        }),
        WorkflowLimits.artifactsPerStep,
        {
          description:
            "Artifacts the step stores; downstream jobs stage them as `jobs.<job>.artifacts.<name>`. A step that succeeds without one of them fails with OutputMissing.",
          "x-kubernetes-list-type": "set",
        },
      ),
    ),
  };
}

export const ActionStepSchema = Obj(stepProperties(), {
  description: "One step of an Action: a script.",
  "x-kubernetes-validations": [
    cel("has(self.run)", "an Action step needs `run` (Actions cannot call Actions)"),
  ],
});

export const StepSchema = Obj(
  {
    ...stepProperties(),
    uses: Type.Optional(
      ObjectName("An Action in the namespace whose steps run here, in the job's workspace and environment."),
    ),
    with: Type.Optional(ValueMap("Inputs of the Action named by `uses`.", WorkflowLimits.withEntries)),
  },
  {
    description: "One step of a job: `run` a script, or `uses` an Action with `with` inputs.",
    "x-kubernetes-validations": [
      cel(
        "has(self.run) != has(self.uses)",
        "a step needs exactly one of `run` (a script) or `uses` (an Action)",
      ),
      cel("!has(self.with) || has(self.uses)", "`with` gives inputs to an Action: it needs `uses`", {
        fieldPath: ".with",
      }),
      cel(
        "!has(self.uses) || (!has(self.outputs) && !has(self.artifacts) && !has(self.timeout) && !has(self.retryPolicy))",
        "a `uses` step takes its outputs, artifacts, timeout and retries from the Action's own steps; remove them here",
      ),
    ],
  },
);

export const StagedArtifactSchema = Obj(
  {
    from: Str(Limits.nameLength, {
      description:
        "`jobs.<job>.artifacts.<name>`: an artifact a step of an upstream job (in `needs`, directly or not) declares.",
      pattern: ARTIFACT_REF_PATTERN,
    }),
    path: Type.Optional(
      Str(1024, {
        description:
          "Where it lands, relative to the job's workspace (default: the artifact's name). A directory artifact (an archive) is unpacked there.",
        minLength: 1,
        pattern: "^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
        "x-kubernetes-validations": [
          cel(
            `!self.matches(${celString("(^|/)[.][.]?(/|$)")})`,
            "path may not contain '.' or '..' segments",
          ),
        ],
      }),
    ),
  },
  { description: "An artifact of an upstream job, staged into this job's workspace before its first step." },
);

export const JobSchema = Obj(
  {
    needs: Type.Optional(
      List(StepName("A job of the same workflow that must succeed first."), WorkflowLimits.needs, {
        description: "Jobs that must succeed before this one starts; if one does not, this job is Skipped.",
        "x-kubernetes-list-type": "set",
      }),
    ),
    runtime: Type.Optional(
      Str(63, {
        description: "The Runtime every step of this job runs on (default: `spec.runtime`).",
        minLength: 1,
        pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      }),
    ),
    env: Type.Optional(EnvList()),
    steps: Type.Optional(
      List(StepSchema, WorkflowLimits.stepsPerJob, {
        description:
          "Run in order, one child Run each, all in the job's workspace; the first failure ends the job.",
        minItems: 1,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
    uses: Type.Optional(ObjectName("A Workflow in the namespace run as a nested WorkflowRun for this job.")),
    with: Type.Optional(ValueMap("Inputs of the Workflow named by `uses`.", WorkflowLimits.withEntries)),
    outputs: Type.Optional(
      ValueMap(
        "The job's outputs: expressions over `steps.<step>.outputs.<key>` (and `inputs`), evaluated when the job succeeds. A `uses` job's outputs are the called Workflow's.",
        WorkflowLimits.outputs,
      ),
    ),
    artifacts: Type.Optional(
      List(StagedArtifactSchema, WorkflowLimits.stagedArtifacts, {
        description: "Artifacts of upstream jobs staged into this job's workspace before its first step.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["from"],
      }),
    ),
  },
  {
    description: "A job: `steps` in one workspace on one Runtime pod, or `uses` a reusable Workflow.",
    "x-kubernetes-validations": [
      cel("has(self.steps) != has(self.uses)", "a job needs exactly one of `steps` or `uses` (a Workflow)"),
      cel("!has(self.with) || has(self.uses)", "`with` gives inputs to a Workflow: it needs `uses`", {
        fieldPath: ".with",
      }),
      cel(
        "!has(self.uses) || (!has(self.runtime) && !has(self.env) && !has(self.outputs) && !has(self.artifacts))",
        "a `uses` job runs the called Workflow's own jobs: remove runtime, env, outputs and artifacts here (pass values with `with`)",
      ),
    ],
  },
);

function jobsMap() {
  return MapOf(JobSchema, WorkflowLimits.jobs, {
    description: "The jobs, by name. Independent jobs run in parallel; `needs` orders them.",
    minProperties: 1,
    "x-kubernetes-validations": [
      keysRule("job", WORKFLOW_NAME_PATTERN, WorkflowLimits.nameLength),
      cel(
        "self.all(j, !has(self[j].needs) || self[j].needs.all(n, n in self && n != j))",
        "every name in `needs` must be another job of this workflow",
      ),
    ],
  });
}

export const InputTypes = ["string", "number", "boolean"] as const;
export type InputType = (typeof InputTypes)[number];

export const InputDeclarationSchema = Obj(
  {
    type: Type.Optional(
      StringEnum(InputTypes, {
        description:
          "`string` (the default), `number` or `boolean` (`true`/`false`); values are passed as text.",
        default: "string",
      }),
    ),
    required: Type.Optional(Type.Boolean({ description: "The caller must give it (no default)." })),
    default: Type.Optional(
      Str(WorkflowLimits.valueLength, { description: "The value when the caller gives none." }),
    ),
    description: Type.Optional(Str(1024, { description: "For people." })),
  },
  {
    description: "A typed input of a Workflow or Action.",
    "x-kubernetes-validations": [
      cel("!(has(self.required) && self.required && has(self.default))", "a required input takes no default"),
      cel(
        `!has(self.default) || !has(self.type) || self.type != 'number' || self.default.matches(${celString("^-?[0-9]+(\\.[0-9]+)?$")})`,
        "the default of a number input must be a number",
      ),
      cel(
        "!has(self.default) || !has(self.type) || self.type != 'boolean' || self.default in ['true', 'false']",
        "the default of a boolean input must be true or false",
      ),
    ],
  },
);

function inputDeclarations() {
  return MapOf(InputDeclarationSchema, WorkflowLimits.inputs, {
    description: "Inputs callers give with `with:` (or `krt workflow trigger --with`).",
    "x-kubernetes-validations": [keysRule("input", WORKFLOW_KEY_PATTERN, Limits.outputNameLength)],
  });
}

export const WorkflowSpecSchema = Obj(
  {
    description: Type.Optional(Str(1024, { description: "For people." })),
    inputs: Type.Optional(inputDeclarations()),
    runtime: Type.Optional(
      Str(63, {
        description: "Default Runtime of jobs that name none.",
        minLength: 1,
        pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      }),
    ),
    env: Type.Optional(EnvList()),
    jobs: jobsMap(),
    outputs: Type.Optional(
      ValueMap(
        "The workflow's outputs: expressions over `jobs.<job>.outputs.<key>`.",
        WorkflowLimits.outputs,
      ),
    ),
  },
  {
    description: "A reusable workflow definition: typed inputs, jobs, outputs.",
    "x-kubernetes-validations": [
      cel(
        "has(self.runtime) || self.jobs.all(j, has(self.jobs[j].uses) || has(self.jobs[j].runtime))",
        "every job with steps needs a runtime: set spec.runtime or the job's runtime",
        { fieldPath: ".jobs" },
      ),
    ],
  },
);

export const ActionSpecSchema = Obj(
  {
    description: Type.Optional(Str(1024, { description: "For people." })),
    inputs: Type.Optional(inputDeclarations()),
    steps: List(ActionStepSchema, WorkflowLimits.stepsPerJob, {
      description:
        "Steps run in the caller's job (its Runtime, workspace, environment); `${{ inputs.x }}` and `${{ steps.<s>.outputs.k }}` refer to the Action's own.",
      minItems: 1,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }),
    outputs: Type.Optional(
      ValueMap("The Action's outputs: expressions over its steps' outputs.", WorkflowLimits.outputs),
    ),
  },
  { description: "A reusable sequence of steps, called by a step with `uses:` + `with:`." },
);

/**
 * `{workflows: {<name>: WorkflowSpec}, actions: {<name>: ActionSpec}}`. Kept schemaless in the CRD
 * (each spec is validated by validateWorkflowRun against the Workflow and Action schemas):
 * nesting whole Workflow specs here would multiply CEL's cost estimate past the apiserver's budget.
 */
export const DefinitionsSchema = Type.Unsafe<{
  workflows?: Record<string, WorkflowSpec>;
  actions?: Record<string, ActionSpec>;
}>({
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
  description:
    "Frozen definitions, `{workflows: {<name>: <Workflow spec>}, actions: {<name>: <Action spec>}}`, used instead of the namespace's Workflows and Actions of those names: a nested WorkflowRun gets its parent's snapshot here, so later edits of the definitions do not change it. May also be written by hand to run unpublished definitions.",
});

export const WorkflowRunSpecSchema = Obj(
  {
    workflowRef: Type.Optional(
      Obj(
        { name: ObjectName("The Workflow this run was rendered from.") },
        {
          description:
            "Where the jobs came from (set by `krt workflow trigger` and nested calls); informational.",
        },
      ),
    ),
    inputs: Type.Optional(
      ValueMap("Input values: `${{ inputs.<name> }}` in jobs, steps and outputs.", WorkflowLimits.inputs),
    ),
    runtime: Type.Optional(
      Str(63, {
        description: "Default Runtime of jobs that name none.",
        minLength: 1,
        pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      }),
    ),
    env: Type.Optional(EnvList()),
    jobs: jobsMap(),
    outputs: Type.Optional(
      ValueMap("The run's outputs: expressions over `jobs.<job>.outputs.<key>`.", WorkflowLimits.outputs),
    ),
    definitions: Type.Optional(DefinitionsSchema),
    termination: Type.Optional(TerminationSchema),
    ttlSecondsAfterFinished: Type.Optional(
      Int32({
        description:
          "Delete the WorkflowRun (and with it its child Runs, workspaces and nested WorkflowRuns) this many seconds after it ended. Unset: keep it. May change.",
        minimum: 0,
        maximum: Limits.ttlSeconds,
      }),
    ),
  },
  {
    description:
      "Desired state of the WorkflowRun. Only `termination` (forward only) and `ttlSecondsAfterFinished` may change after creation.",
    "x-kubernetes-validations": [
      cel(
        "has(self.runtime) || self.jobs.all(j, has(self.jobs[j].uses) || has(self.jobs[j].runtime))",
        "every job with steps needs a runtime: set spec.runtime or the job's runtime",
        { fieldPath: ".jobs" },
      ),
      cel(
        "!has(self.termination) || self.termination.mode == 'Immediate'",
        "a WorkflowRun is cancelled with termination.mode Immediate (Drain is for sessions)",
        { fieldPath: ".termination.mode" },
      ),
      cel(
        "!has(oldSelf.termination) || has(self.termination)",
        "spec.termination cannot be removed once set",
        {
          fieldPath: ".termination",
        },
      ),
      ...(["workflowRef", "inputs", "runtime", "env", "jobs", "outputs", "definitions"] as const).map((f) =>
        cel(
          `has(self.${f}) == has(oldSelf.${f}) && (!has(self.${f}) || self.${f} == oldSelf.${f})`,
          `spec.${f} is immutable: create a new WorkflowRun instead`,
          { fieldPath: `.${f}` },
        ),
      ),
    ],
  },
);

const Time = (description: string) => Str(64, { description, format: "date-time" });

export const StepStatusSchema = Obj(
  {
    name: Str(WorkflowLimits.nameLength * 2 + 1, {
      description: "The step's name; a step of an Action is `<step>.<action step>`.",
    }),
    action: Type.Optional(Str(Limits.nameLength, { description: "The Action this step came from." })),
    run: Type.Optional(Str(Limits.nameLength, { description: "The child Run (once created)." })),
    phase: StringEnum(Object.values(StepPhase) as [StepPhase, ...StepPhase[]], {
      description: "Where the step is.",
    }),
    reason: Type.Optional(Str(64, { description: "The child Run's reason, or a workflow reason." })),
    message: Type.Optional(Str(Limits.messageLength, { description: "Why, for people." })),
    attempt: Type.Optional(
      Int32({ description: "The child Run's attempt.", minimum: 0, maximum: Limits.maxAttempts }),
    ),
    exitCode: Type.Optional(Int32({ description: "The task's exit code.", minimum: 0, maximum: 255 })),
    outputs: Type.Optional(
      MapOf(Str(Limits.outputValueLength, { description: "Output value." }), Limits.outputCount, {
        description: "The outputs the step declared, as it wrote them.",
      }),
    ),
    startTime: Type.Optional(Time("When the child Run started executing.")),
    completionTime: Type.Optional(Time("When it ended.")),
  },
  { description: "One step of a job." },
);

export const JobStatusSchema = Obj(
  {
    phase: StringEnum(Object.values(JobPhase) as [JobPhase, ...JobPhase[]], {
      description: "Where the job is.",
    }),
    reason: Type.Optional(Str(64, { description: "Why (a WorkflowReason)." })),
    message: Type.Optional(Str(Limits.messageLength, { description: "Why, for people." })),
    workspace: Type.Optional(Str(Limits.nameLength, { description: "The job's PersistentWorkspace." })),
    workflowRun: Type.Optional(
      Str(Limits.nameLength, { description: "The nested WorkflowRun of a `uses` job." }),
    ),
    steps: Type.Optional(
      List(StepStatusSchema, WorkflowLimits.expandedStepsPerJob, {
        description: "The steps in order (Actions expanded).",
        "x-kubernetes-list-type": "atomic",
      }),
    ),
    outputs: Type.Optional(
      MapOf(Str(Limits.outputValueLength, { description: "Output value." }), WorkflowLimits.outputs, {
        description: "The job's outputs, once it succeeded.",
      }),
    ),
    artifacts: Type.Optional(
      List(ArtifactRefSchema, WorkflowLimits.expandedStepsPerJob, {
        description: "Artifacts the job's steps declared and stored (the child Runs' references).",
        "x-kubernetes-list-type": "atomic",
      }),
    ),
    startTime: Type.Optional(Time("When its first child was created.")),
    completionTime: Type.Optional(Time("When it settled.")),
  },
  { description: "One job of the WorkflowRun." },
);

export const WorkflowRunStatusSchema = Obj(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    phase: Type.Optional(
      StringEnum(Object.values(WorkflowPhase) as [WorkflowPhase, ...WorkflowPhase[]], {
        description: "`Pending`, `Running`, `Succeeded`, `Failed` or `Cancelled`.",
      }),
    ),
    reason: Type.Optional(
      StringEnum(Object.values(WorkflowReason) as [WorkflowReason, ...WorkflowReason[]], {
        description: "Why it is in its phase.",
      }),
    ),
    message: Type.Optional(Str(Limits.messageLength, { description: "Why, for people." })),
    depth: Type.Optional(
      Int32({ description: "Nesting depth: 0 unless made for a `uses:` job.", minimum: 0, maximum: 16 }),
    ),
    startTime: Type.Optional(Time("When it started.")),
    completionTime: Type.Optional(Time("When it ended.")),
    jobs: Type.Optional(MapOf(JobStatusSchema, WorkflowLimits.jobs, { description: "Each job, by name." })),
    outputs: Type.Optional(
      MapOf(Str(Limits.outputValueLength, { description: "Output value." }), WorkflowLimits.outputs, {
        description: "The run's outputs, once it succeeded.",
      }),
    ),
    definitions: Type.Optional(DefinitionsSchema),
    conditions: Type.Optional(Conditions("`Finished` once it ended, with the same reason.")),
  },
  { description: "Observed state, written by the controller: derived from the child Runs and WorkflowRuns." },
);

export type WorkflowSpec = Static<typeof WorkflowSpecSchema>;
export type ActionSpec = Static<typeof ActionSpecSchema>;
export type WorkflowRunSpec = Static<typeof WorkflowRunSpecSchema>;
export type WorkflowRunStatus = Static<typeof WorkflowRunStatusSchema>;
export type WorkflowJob = Static<typeof JobSchema>;
export type WorkflowStep = Static<typeof StepSchema>;
export type ActionStep = Static<typeof ActionStepSchema>;
export type StagedArtifact = Static<typeof StagedArtifactSchema>;
export type InputDeclaration = Static<typeof InputDeclarationSchema>;
export type WorkflowDefinitions = Static<typeof DefinitionsSchema>;
export type JobStatus = Static<typeof JobStatusSchema>;
export type StepStatus = Static<typeof StepStatusSchema>;

export interface WorkflowRun {
  apiVersion: typeof API_VERSION;
  kind: "WorkflowRun";
  metadata: ObjectMeta;
  spec: WorkflowRunSpec;
  status?: WorkflowRunStatus;
}

export interface Workflow {
  apiVersion: typeof API_VERSION;
  kind: "Workflow";
  metadata: ObjectMeta;
  spec: WorkflowSpec;
}

export interface Action {
  apiVersion: typeof API_VERSION;
  kind: "Action";
  metadata: ObjectMeta;
  spec: ActionSpec;
}
