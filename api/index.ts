/**
 * @kruntimes/api: the shapes every component shares — the `Runtime`, `Run`, `PersistentWorkspace`,
 * `WorkflowRun`, `Workflow` and `Action` kinds (TypeScript
 * types and the CRDs, both built from the TypeBox schemas in `src/`), their constants and closed
 * sets. Protobuf code generated from `proto/` lives in `gen/` and is imported from its own path.
 *
 * The closed sets (`RunPhase`, `Reason`, `RunMode`, …) are each a const object and a type of the
 * same name: `RunPhase.Running` is a value, `RunPhase` also the union of its values.
 */

export type { ArtifactStoreSnapshot } from "./src/artifact-store.ts";
export {
  artifactStoreId,
  maintainerName,
  parseSnapshot,
  SnapshotError,
  snapshotJson,
} from "./src/artifact-store.ts";
export { nowMicros, wallClockMs } from "./src/clock.ts";
export {
  ACTION_KIND,
  ACTION_PLURAL,
  ActionResource,
  Annotations,
  API_VERSION,
  ARTIFACTS_FINALIZER,
  CATEGORY,
  DEFAULT_RUN_REQUEST,
  DEFAULT_RUNS_PER_POD,
  FUNCTION_FINALIZER,
  FunctionLimits,
  GROUP,
  KEY_DESCRIPTIONS,
  Labels,
  Limits,
  MANAGED_BY,
  Priority,
  RUN_KIND,
  RUN_PLURAL,
  RUN_SHORT_NAMES,
  RUN_SINGULAR,
  RUNS_RESOURCE,
  RUNTIME_CONTAINER,
  RUNTIME_KIND,
  RUNTIME_PLURAL,
  RUNTIME_SHORT_NAMES,
  RUNTIME_SINGULAR,
  RUNTIMED_CONTAINER,
  RunResource,
  RuntimeResource,
  SessionLimits,
  TopologyKeys,
  VERSION,
  WORKFLOW_KIND,
  WORKFLOW_PLURAL,
  WORKFLOW_RUN_KIND,
  WORKFLOW_RUN_PLURAL,
  WORKSPACE_KIND,
  WORKSPACE_MOUNT_PATH,
  WORKSPACE_PLURAL,
  WORKSPACE_SHORT_NAMES,
  WORKSPACE_SINGULAR,
  WorkflowResource,
  WorkflowRunResource,
  WorkspaceResource,
} from "./src/constants.ts";
export type { CustomResourceDefinition, PrinterColumn } from "./src/crd/definitions.ts";
export {
  actionCrd,
  crds,
  runCrd,
  runtimeCrd,
  workflowCrd,
  workflowRunCrd,
  workspaceCrd,
} from "./src/crd/definitions.ts";
export type { OpenApiSchema } from "./src/crd/openapi.ts";
export { durationOr, isDuration, parseApiDuration, parseDuration } from "./src/duration.ts";
export type {
  PersistentWorkspace,
  PersistentWorkspaceSpec,
  PersistentWorkspaceStatus,
} from "./src/persistent-workspace.ts";
export {
  PersistentWorkspaceSpecSchema,
  PersistentWorkspaceStatusSchema,
  ReclaimPolicy,
  WORKSPACE_FINALIZER,
  WorkspaceBinding,
  WorkspacePhase,
  workspaceDirectory,
  workspacePath,
} from "./src/persistent-workspace.ts";
export type { RetryableReason, WaitingReason } from "./src/reasons.ts";
export {
  ArtifactDriver,
  DEFAULT_RETRY_ON,
  isTerminalPhase,
  REASON_DESCRIPTIONS,
  REASONS,
  RETRYABLE_REASONS,
  Reason,
  RUN_MODES,
  RUN_PHASES,
  RunConditionType,
  RunMode,
  RunPhase,
  RuntimeConditionType,
  TERMINAL_PHASES,
  TerminationMode,
  WAITING_REASONS,
} from "./src/reasons.ts";
export { canRetry, failedVerdict, maxAttempts, retryDelayMs } from "./src/retry-policy.ts";
export type { Run } from "./src/run.ts";
export { runModeOf, runRequests } from "./src/run.ts";
export type {
  Affinity,
  ArtifactInput,
  EnvVar,
  FunctionMode,
  LabelSelector,
  RetryPolicy,
  RunAffinityTerm,
  RunModeSpec,
  RunResources,
  RunSource,
  RunSpec,
  SessionMode,
  TaskMode,
  Termination,
  WeightedRunAffinityTerm,
  WorkspaceRef,
} from "./src/run-spec.ts";
export { RunSpecSchema } from "./src/run-spec.ts";
export type { ArtifactRef, RunAssignment, RunEndpoint, RunStatus, RunTiming } from "./src/run-status.ts";
export { RunStatusSchema } from "./src/run-status.ts";
export type {
  ArtifactStore,
  Autoscaling,
  PodTemplate,
  Runtime,
  RuntimeSpec,
  RuntimeStatus,
} from "./src/runtime.ts";
export {
  AutoscalingDefaults,
  AutoscalingSchema,
  RuntimeSpecSchema,
  RuntimeStatusSchema,
  runtimeCapacity,
} from "./src/runtime.ts";
export type { Condition } from "./src/schema/common.ts";
export type { ObjectMeta } from "./src/schema/meta.ts";
export type {
  Action,
  ActionSpec,
  ActionStep,
  InputDeclaration,
  InputType,
  JobStatus,
  StagedArtifact,
  StepStatus,
  Workflow,
  WorkflowDefinitions,
  WorkflowJob,
  WorkflowRun,
  WorkflowRunSpec,
  WorkflowRunStatus,
  WorkflowSpec,
  WorkflowStep,
} from "./src/workflow.ts";
export {
  ActionSpecSchema,
  InputTypes,
  JobPhase,
  StepPhase,
  WORKFLOW_REASON_DESCRIPTIONS,
  WorkflowLimits,
  WorkflowPhase,
  WorkflowReason,
  WorkflowRunSpecSchema,
  WorkflowRunStatusSchema,
  WorkflowSpecSchema,
} from "./src/workflow.ts";
export type { Part, Reference, Scope } from "./src/workflow-expr.ts";
export { ExpressionError, evaluate, evaluateMap, parseTemplate, referencesIn } from "./src/workflow-expr.ts";
export type { Issue, JobsShape } from "./src/workflow-validate.ts";
export {
  bindInputs,
  callsOf,
  checkWith,
  resolveDefinitions,
  topologicalOrder,
  upstreamJobs,
  validateActionSpec,
  validateJobs,
  validateWorkflowRunSpec,
  validateWorkflowSpec,
  WorkflowInvalid,
} from "./src/workflow-validate.ts";
