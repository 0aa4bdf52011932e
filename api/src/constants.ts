/** Names every component agrees on: API group and version, kinds, resources, labels, annotations. */

export const GROUP = "kruntimes.io";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** The category both kinds belong to: `kubectl get kruntimes` lists Runtimes and Runs together. */
export const CATEGORY = "kruntimes";

export const RUNTIME_KIND = "Runtime";
export const RUNTIME_PLURAL = "runtimes";
export const RUNTIME_SINGULAR = "runtime";
export const RUNTIME_SHORT_NAMES = ["rt"] as const;

export const RUN_KIND = "Run";
export const RUN_PLURAL = "runs";
export const RUN_SINGULAR = "run";
export const RUN_SHORT_NAMES = ["krun"] as const;

export const WORKSPACE_KIND = "PersistentWorkspace";
export const WORKSPACE_PLURAL = "persistentworkspaces";
export const WORKSPACE_SINGULAR = "persistentworkspace";
export const WORKSPACE_SHORT_NAMES = ["pws"] as const;

export const WORKFLOW_RUN_KIND = "WorkflowRun";
export const WORKFLOW_RUN_PLURAL = "workflowruns";
export const WORKFLOW_RUN_SINGULAR = "workflowrun";
export const WORKFLOW_RUN_SHORT_NAMES = ["wfrun"] as const;

export const WORKFLOW_KIND = "Workflow";
export const WORKFLOW_PLURAL = "workflows";
export const WORKFLOW_SINGULAR = "workflow";
export const WORKFLOW_SHORT_NAMES = ["wf"] as const;

export const ACTION_KIND = "Action";
export const ACTION_PLURAL = "actions";
export const ACTION_SINGULAR = "action";
export const ACTION_SHORT_NAMES = ["wfaction"] as const;

/** REST coordinates in the shape `@kruntimes/kube`'s `path()` takes. */
export const RuntimeResource = { group: GROUP, version: VERSION, plural: RUNTIME_PLURAL } as const;
export const RunResource = { group: GROUP, version: VERSION, plural: RUN_PLURAL } as const;
export const WorkspaceResource = { group: GROUP, version: VERSION, plural: WORKSPACE_PLURAL } as const;
export const WorkflowRunResource = { group: GROUP, version: VERSION, plural: WORKFLOW_RUN_PLURAL } as const;
export const WorkflowResource = { group: GROUP, version: VERSION, plural: WORKFLOW_PLURAL } as const;
export const ActionResource = { group: GROUP, version: VERSION, plural: ACTION_PLURAL } as const;

export const Labels = {
  /** On a Runtime's Deployment and Pods, and on Runs (set by the controller): the Runtime's name. */
  runtime: "kruntimes.io/runtime",
  /** On objects made for one Run (e.g. a session's Service): the Run's name. */
  run: "kruntimes.io/run",
  /** The standard managed-by label; its value is `MANAGED_BY`. */
  managedBy: "app.kubernetes.io/managed-by",
  /** On Runs with stored artifacts and on their store's maintainer objects: the store's id. */
  artifactStore: "kruntimes.io/artifact-store",
  /** On the children of a WorkflowRun (Runs, PersistentWorkspaces, nested WorkflowRuns): its name. */
  workflowRun: "kruntimes.io/workflowrun",
  /** On the children of a WorkflowRun: the job they belong to. */
  workflowJob: "kruntimes.io/workflow-job",
} as const;

export const MANAGED_BY = "kruntimes";

export const Annotations = {
  /**
   * Set by a client on create: wall-clock microseconds since the Unix epoch at which it created the
   * Run. Copied into `status.timing.createdMicros`; `metadata.creationTimestamp` has 1 s precision.
   */
  createdMicros: "kruntimes.io/created-micros",
  /** On a Runtime's Deployment: hash of the rendered Pod template, to tell rollouts apart. */
  templateHash: "kruntimes.io/template-hash",
  /**
   * Set by runtimed on a Run before its first artifact upload, once: the artifact store's
   * configuration (JSON), so cleanup works after the Runtime changed or was deleted.
   */
  artifactStore: "kruntimes.io/artifact-store",
} as const;

/** On Runs that stored artifacts: removed by the store's maintainer once they are deleted. */
export const ARTIFACTS_FINALIZER = "kruntimes.io/artifacts";

/** What each label and annotation key means; rendered into the API reference. */
export const KEY_DESCRIPTIONS: Record<string, string> = {
  [Labels.runtime]: "Label on a Runtime's Deployment and Pods, and on Runs: the Runtime's name.",
  [Labels.run]: "Label on objects made for one Run: the Run's name.",
  [Labels.managedBy]: `Label on objects kruntimes creates, with value \`${MANAGED_BY}\`.`,
  [Annotations.createdMicros]:
    "Annotation a client may set on a Run at create: epoch microseconds, copied into `status.timing.createdMicros`.",
  [Annotations.templateHash]: "Annotation on a Runtime's Deployment: hash of the rendered Pod template.",
  [Labels.artifactStore]:
    "Label on Runs that stored artifacts and on their artifact maintainer's objects: the store's id. As an annotation on such Runs (set once by runtimed): the store configuration, JSON.",
  [Labels.workflowRun]:
    "Label on the objects a WorkflowRun creates (child Runs, job workspaces, nested WorkflowRuns): its name.",
  [Labels.workflowJob]: "Label on the objects a WorkflowRun creates for one job: the job's name.",
};

/** The container in `Runtime.spec.template` that runs the Runtime Server. */
export const RUNTIME_CONTAINER = "runtime";
/** The sidecar the controller injects into every Runtime Pod; users may not name a container so. */
export const RUNTIMED_CONTAINER = "runtimed";
/** Where `Runtime.spec.workspace` is mounted in the runtime container. */
export const WORKSPACE_MOUNT_PATH = "/workspace";

/** The built-in logical resource: concurrent Runs per pod. */
export const RUNS_RESOURCE = "runs";
/** `Runtime.spec.capacity.runs` when not given. */
export const DEFAULT_RUNS_PER_POD = 8;
/** `Run.spec.resources.requests.runs` when not given. */
export const DEFAULT_RUN_REQUEST = 1;

/**
 * Function-mode defaults and maxima (`spec.mode.function`). The Runtime Server applies the same
 * defaults to zero fields of its Register call, so a Run without these fields behaves the same on
 * any server.
 */
export const FunctionLimits = {
  defaultConcurrency: 1,
  maxConcurrency: 64,
  /** Invocations that may wait for a worker per Run, beyond `concurrency`; more are refused busy. */
  defaultQueueLimit: 64,
  maxQueueLimit: 1024,
  defaultMaxRequestBytes: 1024 * 1024,
  maxMaxRequestBytes: 16 * 1024 * 1024,
  defaultMaxResponseBytes: 1024 * 1024,
  maxMaxResponseBytes: 16 * 1024 * 1024,
  defaultInvocationTimeoutMs: 30_000,
  maxInvocationTimeoutMs: 15 * 60_000,
} as const;

/** Session-mode defaults and maxima (`spec.mode.session`). */
export const SessionLimits = {
  defaultOperationTimeoutMs: 5 * 60_000,
  maxOperationTimeoutMs: 60 * 60_000,
  /** Mutations that may wait behind the running one per session; more are refused busy. */
  defaultMaxQueuedOperations: 64,
  maxMaxQueuedOperations: 1024,
  /** ListFiles page size when not given, and the largest accepted. */
  defaultListLimit: 100,
  maxListLimit: 1000,
} as const;

/** On function (and session) Runs while registered: runtimed unregisters before it is removed. */
export const FUNCTION_FINALIZER = "kruntimes.io/function";

/** The bounds the schemas enforce, for clients that want to check or truncate before writing. */
export const Limits = {
  inlineSourceLength: 256 * 1024,
  argCount: 256,
  argLength: 32 * 1024,
  entrypointLength: 4096,
  envCount: 128,
  envNameLength: 256,
  envValueLength: 32 * 1024,
  durationLength: 32,
  maxAttempts: 10,
  retryOnCount: 16,
  resourceCount: 16,
  resourceNameLength: 63,
  resourceQuantity: 1_000_000,
  ttlSeconds: 366 * 24 * 3600,
  replicas: 1000,
  containerCount: 32,
  outputCount: 32,
  outputNameLength: 63,
  outputValueLength: 4096,
  tailLength: 16 * 1024,
  messageLength: 4096,
  artifactCount: 32,
  conditionCount: 8,
  nameLength: 253,
  urlLength: 2048,
  /** `spec.affinity`: terms per required/preferred list, labels and expressions per selector. */
  affinityTerms: 8,
  selectorLabels: 16,
  selectorExpressions: 8,
  selectorValues: 32,
  labelKeyLength: 317,
  labelValueLength: 63,
} as const;

/**
 * `spec.priority` of a Run: higher is popped first from the scheduler's queue, FIFO within one
 * priority; a waiting Run ages up so a low priority is never starved. Above `unprivilegedMax`
 * the chart's admission policy requires `create` on `runs/priority` (see docs/concepts/scheduling.md).
 */
export const Priority = {
  min: -1000,
  max: 1000,
  default: 0,
  unprivilegedMax: 0,
} as const;

/** Where Run affinity terms co-locate: one Runtime pod (more keys may come). */
export const TopologyKeys = { runtimePod: "kruntimes.io/runtime-pod" } as const;
