/**
 * `Run.spec`: what to execute (source, mode and its inputs), where (runtime), and the policies
 * around it. Everything that affects execution is immutable after creation; only
 * `ttlSecondsAfterFinished` and `termination` (forward only) may change.
 */
import type { Static } from "@sinclair/typebox";
import {
  DEFAULT_RUN_REQUEST,
  FunctionLimits,
  Limits,
  Priority,
  SessionLimits,
  TopologyKeys,
} from "./constants.ts";
import { DEFAULT_RETRY_ON, RETRYABLE_REASONS, TerminationMode } from "./reasons.ts";
import { DURATION_PATTERN, Duration, ObjectName, ResourceMap } from "./schema/common.ts";
import {
  type CelRule,
  cel,
  celString,
  Int32,
  List,
  MapOf,
  Num,
  Obj,
  Str,
  StringEnum,
  Type,
} from "./schema/kube.ts";

const TaskModeSchema = Obj(
  {
    entrypoint: Type.Optional(
      Str(Limits.entrypointLength, {
        description:
          "Path of a script file to run, in the runtime container (absolute, or relative to `/workspace`). Not allowed with `spec.source.inline`.",
        minLength: 1,
      }),
    ),
    args: Type.Optional(
      List(Str(Limits.argLength, { description: "One argument or command." }), Limits.argCount, {
        description:
          "With `entrypoint`: its arguments. Without: shell commands, run in order by shell-style runtimes. Not allowed with `spec.source.inline`.",
      }),
    ),
  },
  {
    description:
      "Run once to completion. The input is one of: `spec.source.inline` (a standalone script), `entrypoint` (+ `args`), or `args` alone (shell commands).",
  },
);

const FunctionModeSchema = Obj(
  {
    handler: Type.Optional(
      Str(253, {
        description: "Name of the function exported by `spec.source.inline` that serves each invocation.",
        pattern: "^[A-Za-z_$][A-Za-z0-9_$.]*$",
        default: "handler",
      }),
    ),
    idleTimeout: Type.Optional(
      Duration(
        "End the Run (reason `IdleTimeout`, phase Succeeded) when no invocation arrived for this long. Unset: never.",
      ),
    ),
    concurrency: Type.Optional(
      Int32({
        description: `Invocations served at once (persistent workers on the pod). More wait in a bounded queue, then are refused as busy (429).`,
        minimum: 1,
        maximum: FunctionLimits.maxConcurrency,
        default: FunctionLimits.defaultConcurrency,
      }),
    ),
    maxRequestBytes: Type.Optional(
      Int32({
        description: `Largest request body accepted; larger ones are refused (413). Default ${FunctionLimits.defaultMaxRequestBytes}.`,
        minimum: 1,
        maximum: FunctionLimits.maxMaxRequestBytes,
      }),
    ),
    maxResponseBytes: Type.Optional(
      Int32({
        description: `Largest response body returned; a larger one fails that invocation. Default ${FunctionLimits.defaultMaxResponseBytes}.`,
        minimum: 1,
        maximum: FunctionLimits.maxMaxResponseBytes,
      }),
    ),
    invocationTimeout: Type.Optional(
      Duration(
        `Default and longest time one invocation may take (a caller may ask for less). Default ${FunctionLimits.defaultInvocationTimeoutMs / 1000}s, at most ${FunctionLimits.maxInvocationTimeoutMs / 60_000}m.`,
      ),
    ),
  },
  {
    description:
      "Register a handler on a warm pod and serve invocations through the gateway while `Ready`. Needs `spec.source.inline`. `spec.timeout` bounds the Run's whole lifetime.",
    "x-kubernetes-validations": [
      cel(
        `!has(self.invocationTimeout) || !self.invocationTimeout.matches(${celString(DURATION_PATTERN)}) || duration(self.invocationTimeout) <= duration('${FunctionLimits.maxInvocationTimeoutMs / 60_000}m')`,
        `spec.mode.function.invocationTimeout must be at most ${FunctionLimits.maxInvocationTimeoutMs / 60_000}m`,
      ),
    ],
  },
);

const SessionModeSchema = Obj(
  {
    idleTimeout: Type.Optional(
      Duration(
        "Drain and end the session (reason `IdleTimeout`) when no operation arrived for this long. Unset: never.",
      ),
    ),
    defaultOperationTimeout: Type.Optional(
      Duration(
        `Timeout of an operation that does not ask for one (queue wait included). Default ${SessionLimits.defaultOperationTimeoutMs / 60_000}m.`,
      ),
    ),
    maxOperationTimeout: Type.Optional(
      Duration(
        `Longest timeout an operation may ask for. Default and maximum ${SessionLimits.maxOperationTimeoutMs / 60_000}m.`,
      ),
    ),
    maxQueuedOperations: Type.Optional(
      Int32({
        description: "Mutations that may wait behind the running one; more are refused as busy (429).",
        minimum: 1,
        maximum: SessionLimits.maxMaxQueuedOperations,
        default: SessionLimits.defaultMaxQueuedOperations,
      }),
    ),
  },
  {
    description:
      "Hold an exclusive, stateful workspace on a warm pod, driven through the gateway (commands, files, processes) until drained or cancelled. Takes no `spec.source`. The session takes its pod's whole capacity, and the pod is replaced after it ends. `spec.timeout` bounds its whole lifetime.",
    "x-kubernetes-validations": [
      cel(
        `!has(self.maxOperationTimeout) || !self.maxOperationTimeout.matches(${celString(DURATION_PATTERN)}) || duration(self.maxOperationTimeout) <= duration('${SessionLimits.maxOperationTimeoutMs / 60_000}m')`,
        `spec.mode.session.maxOperationTimeout must be at most ${SessionLimits.maxOperationTimeoutMs / 60_000}m`,
      ),
      cel(
        `!has(self.defaultOperationTimeout) || !self.defaultOperationTimeout.matches(${celString(DURATION_PATTERN)}) || duration(self.defaultOperationTimeout) <= duration(has(self.maxOperationTimeout) && self.maxOperationTimeout.matches(${celString(DURATION_PATTERN)}) ? self.maxOperationTimeout : '${SessionLimits.maxOperationTimeoutMs / 60_000}m')`,
        `spec.mode.session.defaultOperationTimeout must not exceed maxOperationTimeout (at most ${SessionLimits.maxOperationTimeoutMs / 60_000}m when unset)`,
      ),
    ],
  },
);

export const RunModeSchema = Obj(
  {
    task: Type.Optional(TaskModeSchema),
    function: Type.Optional(FunctionModeSchema),
    session: Type.Optional(SessionModeSchema),
  },
  {
    description: "How the Run uses its pod: exactly one of `task`, `function` or `session`.",
    "x-kubernetes-validations": [
      cel(
        "(has(self.task) ? 1 : 0) + (has(self.function) ? 1 : 0) + (has(self.session) ? 1 : 0) == 1",
        "spec.mode needs exactly one of task, function or session",
      ),
      cel("self == oldSelf", "spec.mode is immutable: create a new Run instead"),
    ],
  },
);

export const SourceSchema = Obj(
  {
    inline: Str(Limits.inlineSourceLength, {
      description:
        "The code itself: a standalone script for a task (run by the Runtime's interpreter, with no arguments) or the module defining the handler for a function. Characters, not bytes.",
      minLength: 1,
    }),
  },
  { description: "Where the Run's code comes from." },
);

export const EnvVarSchema = Obj(
  {
    name: Str(Limits.envNameLength, {
      description: "Variable name: letters, digits and `_`, not starting with a digit.",
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
    }),
    value: Str(Limits.envValueLength, { description: "Variable value (may be empty)." }),
  },
  { description: "One environment variable." },
);

export const RetryPolicySchema = Obj(
  {
    maxAttempts: Type.Optional(
      Int32({
        description: "Attempts in total, the first included; 1 means no retry.",
        minimum: 1,
        maximum: Limits.maxAttempts,
        default: 1,
      }),
    ),
    backoff: Type.Optional(
      Obj(
        {
          initial: Type.Optional(Duration("Delay before the second attempt.", { default: "1s" })),
          max: Type.Optional(Duration("Upper bound of the delay between attempts.", { default: "5m" })),
          multiplier: Type.Optional(
            Num({
              description: "Factor applied to the delay after each retry.",
              minimum: 1,
              maximum: 10,
              default: 2,
            }),
          ),
        },
        {
          description:
            "Delay between attempts: `initial`, multiplied by `multiplier` after each retry, capped at `max`.",
          default: {},
          "x-kubernetes-validations": [
            cel(
              `!has(self.initial) || !has(self.max) || !self.initial.matches(${celString(DURATION_PATTERN)}) || !self.max.matches(${celString(DURATION_PATTERN)}) || duration(self.initial) <= duration(self.max)`,
              "spec.retryPolicy.backoff.initial must not exceed backoff.max",
            ),
          ],
        },
      ),
    ),
    retryOn: Type.Optional(
      List(StringEnum(RETRYABLE_REASONS, { description: "A retryable reason." }), Limits.retryOnCount, {
        description: `Failure reasons that start another attempt; other failures are final. Default: ${DEFAULT_RETRY_ON.join(", ")} (failures of the pod, not of the code).`,
        "x-kubernetes-list-type": "set",
        default: [...DEFAULT_RETRY_ON],
      }),
    ),
  },
  { description: "When and how often a failed attempt is retried. Without it, a Run has one attempt." },
);

export const ResourcesSchema = Obj(
  {
    requests: Type.Optional(
      ResourceMap(
        `Logical resources one attempt holds on its pod while it runs, out of the Runtime's \`spec.capacity\`. \`runs\` is ${DEFAULT_RUN_REQUEST} when not given.`,
        { default: { runs: DEFAULT_RUN_REQUEST } },
      ),
    ),
  },
  { description: "Logical resources the Run needs.", default: {} },
);

export const TerminationSchema = Obj(
  {
    mode: StringEnum([TerminationMode.Immediate, TerminationMode.Drain] as const, {
      description:
        "`Immediate` cancels now; `Drain` (sessions only) lets running work finish and accepts nothing new. Moves forward only: unset → Drain → Immediate.",
      "x-kubernetes-validations": [
        cel(
          "self == oldSelf || (oldSelf == 'Drain' && self == 'Immediate')",
          "spec.termination.mode can only move forward (unset → Drain → Immediate); it cannot go back",
        ),
      ],
    }),
  },
  { description: "Ask the Run to end. Set it to cancel a task or function, or drain a session." },
);

/** metav1.LabelSelectorRequirement. */
const LabelSelectorRequirementSchema = Obj(
  {
    key: Str(Limits.labelKeyLength, { description: "The label key the selector applies to.", minLength: 1 }),
    operator: StringEnum(["In", "NotIn", "Exists", "DoesNotExist"] as const, {
      description: "`In`, `NotIn`, `Exists` or `DoesNotExist`.",
    }),
    values: Type.Optional(
      List(Str(Limits.labelValueLength, { description: "A label value." }), Limits.selectorValues, {
        description: "Non-empty for In and NotIn, empty for Exists and DoesNotExist.",
      }),
    ),
  },
  {
    description: "A label requirement, as in metav1.LabelSelectorRequirement.",
    "x-kubernetes-validations": [
      cel(
        "(self.operator in ['In', 'NotIn']) == (has(self.values) && size(self.values) > 0)",
        "values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist",
      ),
    ],
  },
);

/** metav1.LabelSelector, non-empty: an affinity term that selects every Run is a mistake. */
const LabelSelectorSchema = Obj(
  {
    matchLabels: Type.Optional(
      MapOf(Str(Limits.labelValueLength, { description: "A label value." }), Limits.selectorLabels, {
        description: "Labels a Run must carry, all of them.",
      }),
    ),
    matchExpressions: Type.Optional(
      List(LabelSelectorRequirementSchema, Limits.selectorExpressions, {
        description: "Requirements a Run's labels must meet, all of them.",
      }),
    ),
  },
  {
    description: "Selects Runs in the Run's own namespace by their labels (metav1.LabelSelector).",
    "x-kubernetes-validations": [
      cel(
        "(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",
        "labelSelector must not be empty: give matchLabels or matchExpressions (an empty selector would match every Run)",
      ),
    ],
  },
);

const RunAffinityTermSchema = Obj(
  {
    labelSelector: LabelSelectorSchema,
    topologyKey: StringEnum([TopologyKeys.runtimePod] as const, {
      description: `Where the selected Runs count as co-located: \`${TopologyKeys.runtimePod}\` (the same Runtime pod).`,
    }),
  },
  {
    description:
      "Runs matching labelSelector, in this Run's namespace, placed on the same topologyKey domain.",
  },
);

const WeightedRunAffinityTermSchema = Obj(
  {
    weight: Int32({
      description: "Added to a pod's score when the term holds there (1–100).",
      minimum: 1,
      maximum: 100,
    }),
    runAffinityTerm: RunAffinityTermSchema,
  },
  { description: "A preferred term and its weight." },
);

function affinityRules(what: string) {
  return Obj(
    {
      requiredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        List(RunAffinityTermSchema, Limits.affinityTerms, {
          description: `Terms that must all hold for a pod to be chosen (${what}). A Run none fits stays Pending.`,
        }),
      ),
      preferredDuringSchedulingIgnoredDuringExecution: Type.Optional(
        List(WeightedRunAffinityTermSchema, Limits.affinityTerms, {
          description: `Terms that raise (${what}) a pod's score by their weight when they hold.`,
        }),
      ),
    },
    { description: `Run ${what} rules, checked when the Run is placed and ignored afterwards.` },
  );
}

export const AffinitySchema = Obj(
  {
    runAffinity: Type.Optional(affinityRules("co-location with the selected Runs")),
    runAntiAffinity: Type.Optional(affinityRules("separation from the selected Runs")),
  },
  { description: "Placement relative to other Runs, in Kubernetes' own words (like pod affinity)." },
);

export const WorkspaceRefSchema = Obj(
  {
    // A PersistentWorkspace name is at most 63 characters (its root rule): no longer one can exist.
    name: { ...ObjectName("Name of a PersistentWorkspace in the Run's namespace."), maxLength: 63 },
  },
  {
    description:
      "A PersistentWorkspace whose directory on its bound pod becomes the Run's working directory; the Run is placed on that pod. Using it needs `use` on `persistentworkspaces/<name>` (checked at admission).",
  },
);

export const ArtifactInputSchema = Obj(
  {
    run: ObjectName("A Run in this Run's namespace whose stored artifact is staged."),
    name: Str(Limits.nameLength, {
      description: "The artifact's name in that Run's `status.artifactRefs` (its latest attempt's).",
      minLength: 1,
      pattern: "^[A-Za-z0-9._-]+$",
    }),
    path: Type.Optional(
      Str(1024, {
        description:
          "Where it lands, relative to the Run's working directory (default: the artifact's name). An archive (a directory artifact) is unpacked into it.",
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
  {
    description:
      "An artifact another Run stored, fetched by runtimed from the same artifact store into this Run's working directory before the task starts (size and digest verified).",
  },
);

/** Optional spec fields that affect execution: present or absent, they may not change. */
const IMMUTABLE_OPTIONAL_FIELDS = [
  "source",
  "env",
  "timeout",
  "retryPolicy",
  "resources",
  "affinity",
  "priority",
  "workspace",
  "artifactInputs",
] as const;

function immutable(field: string): CelRule {
  return cel(
    `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    `spec.${field} is immutable: it affects execution; create a new Run instead`,
    { fieldPath: `.${field}` },
  );
}

const TASK_INPUT_RULES: CelRule[] = [
  cel(
    "!has(self.source) || !has(self.mode.task) || (!has(self.mode.task.entrypoint) && !has(self.mode.task.args))",
    "spec.source.inline is a standalone script: remove spec.mode.task.entrypoint and spec.mode.task.args (pass values through spec.env), or remove spec.source.inline and name a script file in entrypoint",
  ),
  cel(
    "!has(self.mode.task) || has(self.source) || has(self.mode.task.entrypoint) || (has(self.mode.task.args) && size(self.mode.task.args) > 0)",
    "a task needs an input: set spec.source.inline (a script), spec.mode.task.entrypoint (a script file) or spec.mode.task.args (shell commands)",
  ),
  cel(
    "!has(self.mode.function) || has(self.source)",
    "function mode needs spec.source.inline: the module that defines the handler",
  ),
  cel(
    "!has(self.mode.session) || !has(self.source)",
    "session mode takes no spec.source: a session starts with an empty workspace and is driven through the gateway",
  ),
  cel(
    "!has(self.mode.session) || !has(self.workspace)",
    "session mode takes no spec.workspace: a session's pod is replaced when it ends, which would lose the PersistentWorkspace; use a task or function Run",
    { fieldPath: ".workspace" },
  ),
  cel(
    "!has(self.artifactInputs) || has(self.mode.task)",
    "spec.artifactInputs stages files for a task before it starts; functions and sessions take none",
    { fieldPath: ".artifactInputs" },
  ),
];

const TERMINATION_RULES: CelRule[] = [
  cel(
    "!has(self.termination) || self.termination.mode != 'Drain' || has(self.mode.session)",
    "spec.termination.mode Drain is for sessions only; use Immediate to cancel a task or function",
    { fieldPath: ".termination.mode" },
  ),
  cel("!has(oldSelf.termination) || has(self.termination)", "spec.termination cannot be removed once set", {
    fieldPath: ".termination",
  }),
];

export const RunSpecSchema = Obj(
  {
    runtime: Str(63, {
      description: "Name of the Runtime, in the Run's namespace, whose pods execute the Run.",
      minLength: 1,
      // A Runtime name is a DNS-1035 label (it names the Runtime's Service).
      pattern: "^[a-z]([-a-z0-9]*[a-z0-9])?$",
      "x-kubernetes-validations": [
        cel("self == oldSelf", "spec.runtime is immutable: create a new Run instead"),
      ],
    }),
    mode: RunModeSchema,
    source: Type.Optional(SourceSchema),
    env: Type.Optional(
      List(EnvVarSchema, Limits.envCount, {
        description: "Environment variables of the attempt, on top of the runtime container's.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
    timeout: Type.Optional(
      Duration(
        "Tasks: longest one attempt may run (each retry gets its own). Functions and sessions: the Run's whole lifetime from the first registration / opening. Then it ends with reason Timeout. Unset: no limit.",
      ),
    ),
    retryPolicy: Type.Optional(RetryPolicySchema),
    resources: Type.Optional(ResourcesSchema),
    ttlSecondsAfterFinished: Type.Optional(
      Int32({
        description:
          "Delete the Run this many seconds after it reaches a terminal phase. Unset: keep it. May change.",
        minimum: 0,
        maximum: Limits.ttlSeconds,
      }),
    ),
    termination: Type.Optional(TerminationSchema),
    affinity: Type.Optional(AffinitySchema),
    priority: Type.Optional(
      Int32({
        description: `Order in the scheduler's queue: higher first, FIFO within a priority, a waiting Run ages up over time; no preemption. ${Priority.min} to ${Priority.max}, default ${Priority.default}. Above ${Priority.unprivilegedMax} needs \`create\` on \`runs/priority\` (the chart's admission policy).`,
        minimum: Priority.min,
        maximum: Priority.max,
      }),
    ),
    workspace: Type.Optional(WorkspaceRefSchema),
    artifactInputs: Type.Optional(
      List(ArtifactInputSchema, Limits.artifactCount, {
        description:
          "Artifacts of other Runs staged into the working directory before the task starts. The Runtime must use the artifact store they were stored in; creating the Run needs `get` on each source Run (checked at admission by the chart's policy).",
        "x-kubernetes-list-type": "atomic",
      }),
    ),
  },
  {
    description: "Desired state of the Run.",
    "x-kubernetes-validations": [
      ...TASK_INPUT_RULES,
      ...TERMINATION_RULES,
      ...IMMUTABLE_OPTIONAL_FIELDS.map(immutable),
    ],
  },
);

export type RunSpec = Static<typeof RunSpecSchema>;
export type RunModeSpec = Static<typeof RunModeSchema>;
export type TaskMode = Static<typeof TaskModeSchema>;
export type FunctionMode = Static<typeof FunctionModeSchema>;
export type SessionMode = Static<typeof SessionModeSchema>;
export type RunSource = Static<typeof SourceSchema>;
export type EnvVar = Static<typeof EnvVarSchema>;
export type RetryPolicy = Static<typeof RetryPolicySchema>;
export type RunResources = Static<typeof ResourcesSchema>;
export type Termination = Static<typeof TerminationSchema>;
export type Affinity = Static<typeof AffinitySchema>;
export type RunAffinityTerm = Static<typeof RunAffinityTermSchema>;
export type WeightedRunAffinityTerm = Static<typeof WeightedRunAffinityTermSchema>;
export type LabelSelector = Static<typeof LabelSelectorSchema>;
export type WorkspaceRef = Static<typeof WorkspaceRefSchema>;
export type ArtifactInput = Static<typeof ArtifactInputSchema>;
