/**
 * The CustomResourceDefinitions of `Runtime` and `Run`, as objects: the chart's YAML is rendered
 * from these, and the controller and tests install them directly.
 */
import type { TSchema } from "@sinclair/typebox";
import {
  ACTION_KIND,
  ACTION_PLURAL,
  ACTION_SHORT_NAMES,
  ACTION_SINGULAR,
  API_VERSION,
  CATEGORY,
  GROUP,
  Limits,
  RUN_KIND,
  RUN_PLURAL,
  RUN_SHORT_NAMES,
  RUN_SINGULAR,
  RUNTIME_KIND,
  RUNTIME_PLURAL,
  RUNTIME_SHORT_NAMES,
  RUNTIME_SINGULAR,
  VERSION,
  WORKFLOW_KIND,
  WORKFLOW_PLURAL,
  WORKFLOW_RUN_KIND,
  WORKFLOW_RUN_PLURAL,
  WORKFLOW_RUN_SHORT_NAMES,
  WORKFLOW_RUN_SINGULAR,
  WORKFLOW_SHORT_NAMES,
  WORKFLOW_SINGULAR,
  WORKSPACE_KIND,
  WORKSPACE_PLURAL,
  WORKSPACE_SHORT_NAMES,
  WORKSPACE_SINGULAR,
} from "../constants.ts";
import { PersistentWorkspaceSpecSchema, PersistentWorkspaceStatusSchema } from "../persistent-workspace.ts";
import { RunSpecSchema } from "../run-spec.ts";
import { RunStatusSchema } from "../run-status.ts";
import { RuntimeSpecSchema, RuntimeStatusSchema } from "../runtime.ts";
import { cel, Obj, Str, Type } from "../schema/kube.ts";
import {
  ActionSpecSchema,
  WorkflowRunSpecSchema,
  WorkflowRunStatusSchema,
  WorkflowSpecSchema,
} from "../workflow.ts";
import { type OpenApiSchema, toOpenApi } from "./openapi.ts";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: { kind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: {
        status?: Record<string, never>;
        scale?: { specReplicasPath: string; statusReplicasPath: string };
      };
      additionalPrinterColumns: PrinterColumn[];
      selectableFields?: { jsonPath: string }[];
      schema: { openAPIV3Schema: OpenApiSchema };
    }[];
  };
}

interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  description: string;
  spec: TSchema;
  /** Kinds without one (definitions nobody reconciles) get no status subresource. */
  status?: TSchema;
  rootRules?: ReturnType<typeof cel>[];
  columns: PrinterColumn[];
  /** Fields usable in field selectors (GA in Kubernetes 1.32); each must be a scalar. */
  selectableFields?: readonly string[];
  scale?: { specReplicasPath: string; statusReplicasPath: string };
}

function rootSchema(def: KindDefinition): OpenApiSchema {
  return toOpenApi(
    Obj(
      {
        apiVersion: Type.Optional(Str(253, { description: `\`${API_VERSION}\`.` })),
        kind: Type.Optional(Str(63, { description: `\`${def.kind}\`.` })),
        // The apiserver allows nothing but `type` here (not even a description).
        metadata: Type.Optional(Type.Unsafe({ type: "object" })),
        spec: def.spec,
        ...(def.status ? { status: Type.Optional(def.status) } : {}),
      },
      {
        description: def.description,
        ...(def.rootRules ? { "x-kubernetes-validations": def.rootRules } : {}),
      },
    ),
  );
}

function crd(def: KindDefinition): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: {
        kind: def.kind,
        plural: def.plural,
        singular: def.singular,
        shortNames: [...def.shortNames],
        categories: [CATEGORY],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: {
            ...(def.status ? { status: {} } : {}),
            ...(def.scale ? { scale: def.scale } : {}),
          },
          additionalPrinterColumns: def.columns,
          ...(def.selectableFields
            ? { selectableFields: def.selectableFields.map((jsonPath) => ({ jsonPath })) }
            : {}),
          schema: { openAPIV3Schema: rootSchema(def) },
        },
      ],
    },
  };
}

const age: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
  description: "Time since creation.",
};

export const runtimeCrd: CustomResourceDefinition = crd({
  kind: RUNTIME_KIND,
  plural: RUNTIME_PLURAL,
  singular: RUNTIME_SINGULAR,
  shortNames: RUNTIME_SHORT_NAMES,
  description: "A pool of warm Runtime Pods (one Deployment) onto which kruntimes places Runs.",
  spec: RuntimeSpecSchema,
  status: RuntimeStatusSchema,
  rootRules: [
    // The name is the Runtime's Service (a DNS-1035 label) and a label value on its pods.
    cel(
      "size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
      "a Runtime name is a DNS-1035 label (at most 63 lowercase letters, digits and '-', starting with a letter): it names the Runtime's Service and labels its pods",
    ),
  ],
  scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" },
  columns: [
    { name: "Desired", type: "integer", jsonPath: ".spec.replicas", description: "Warm pods wanted." },
    { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas", description: "Warm pods ready." },
    {
      name: "Available",
      type: "integer",
      jsonPath: ".status.availableReplicas",
      description: "Ready pods accepting new Runs.",
    },
    {
      name: "Capacity",
      type: "integer",
      jsonPath: ".spec.capacity.runs",
      description: "Concurrent Runs per pod.",
    },
    {
      name: "Pending",
      type: "integer",
      jsonPath: ".status.pendingRuns",
      description: "Pending Runs waiting for a pod of this Runtime.",
    },
    age,
  ],
});

export const runCrd: CustomResourceDefinition = crd({
  kind: RUN_KIND,
  plural: RUN_PLURAL,
  singular: RUN_SINGULAR,
  shortNames: RUN_SHORT_NAMES,
  description: `One execution request — a task, a function or a session — placed on a warm pod of a Runtime. Inline source up to ${Limits.inlineSourceLength / 1024} Ki characters.`,
  spec: RunSpecSchema,
  status: RunStatusSchema,
  // runtimed watches only its pod's Runs (`status.assignment.pod=<pod>`), server-side filtered;
  // `krt list` filters by runtime and phase the same way.
  selectableFields: [".spec.runtime", ".status.assignment.pod", ".status.phase"],
  columns: [
    { name: "Runtime", type: "string", jsonPath: ".spec.runtime", description: "The Runtime it runs on." },
    { name: "Phase", type: "string", jsonPath: ".status.phase", description: "Lifecycle phase." },
    { name: "Pod", type: "string", jsonPath: ".status.assignment.pod", description: "Assigned Runtime Pod." },
    { name: "Attempt", type: "integer", jsonPath: ".status.attempt", description: "Current attempt." },
    { name: "Exit", type: "integer", jsonPath: ".status.exitCode", description: "Exit code of the task." },
    {
      name: "Reason",
      type: "string",
      jsonPath: ".status.reason",
      description: "Why it is in its phase.",
      priority: 1,
    },
    age,
  ],
});

export const workspaceCrd: CustomResourceDefinition = crd({
  kind: WORKSPACE_KIND,
  plural: WORKSPACE_PLURAL,
  singular: WORKSPACE_SINGULAR,
  shortNames: WORKSPACE_SHORT_NAMES,
  description:
    "A directory on one Runtime pod that outlives the Runs using it: Runs naming it in spec.workspace are placed on that pod and work there.",
  spec: PersistentWorkspaceSpecSchema,
  status: PersistentWorkspaceStatusSchema,
  // runtimed watches only the workspaces bound to its own pod.
  selectableFields: [".status.boundPod"],
  rootRules: [
    cel(
      "size(self.metadata.name) <= 63",
      "a PersistentWorkspace name is at most 63 characters: it becomes a directory and label value",
    ),
  ],
  columns: [
    {
      name: "Runtime",
      type: "string",
      jsonPath: ".status.runtime",
      description: "The Runtime it is bound to.",
    },
    {
      name: "Phase",
      type: "string",
      jsonPath: ".status.phase",
      description: "Pending, Bound, Released or Lost.",
    },
    {
      name: "Pod",
      type: "string",
      jsonPath: ".status.boundPod",
      description: "The pod holding the directory.",
    },
    { name: "Active", type: "integer", jsonPath: ".status.activeRuns", description: "Runs using it now." },
    age,
  ],
});

const NAME_63 = (kind: string, why: string) =>
  cel("size(self.metadata.name) <= 63", `a ${kind} name is at most 63 characters: ${why}`);

export const workflowRunCrd: CustomResourceDefinition = crd({
  kind: WORKFLOW_RUN_KIND,
  plural: WORKFLOW_RUN_PLURAL,
  singular: WORKFLOW_RUN_SINGULAR,
  shortNames: WORKFLOW_RUN_SHORT_NAMES,
  description:
    "One execution of a workflow: jobs ordered by `needs`, each a sequence of steps run as child Runs in a job-local PersistentWorkspace; reusable Workflows and Actions called with `uses:`.",
  spec: WorkflowRunSpecSchema,
  status: WorkflowRunStatusSchema,
  rootRules: [NAME_63("WorkflowRun", "it becomes a label value on its children")],
  selectableFields: [".status.phase"],
  columns: [
    { name: "Phase", type: "string", jsonPath: ".status.phase", description: "Lifecycle phase." },
    { name: "Reason", type: "string", jsonPath: ".status.reason", description: "Why it is in its phase." },
    {
      name: "Workflow",
      type: "string",
      jsonPath: ".spec.workflowRef.name",
      description: "The Workflow it was rendered from.",
    },
    { name: "Started", type: "date", jsonPath: ".status.startTime", description: "When it started." },
    age,
  ],
});

export const workflowCrd: CustomResourceDefinition = crd({
  kind: WORKFLOW_KIND,
  plural: WORKFLOW_PLURAL,
  singular: WORKFLOW_SINGULAR,
  shortNames: WORKFLOW_SHORT_NAMES,
  description:
    "A reusable workflow: typed inputs, jobs, outputs. Run it with `krt workflow trigger` or call it from a job with `uses:`.",
  spec: WorkflowSpecSchema,
  rootRules: [NAME_63("Workflow", "it is referenced from jobs and labels")],
  columns: [
    { name: "Description", type: "string", jsonPath: ".spec.description", description: "What it does." },
    age,
  ],
});

export const actionCrd: CustomResourceDefinition = crd({
  kind: ACTION_KIND,
  plural: ACTION_PLURAL,
  singular: ACTION_SINGULAR,
  shortNames: ACTION_SHORT_NAMES,
  description: "A reusable sequence of steps, called by a workflow step with `uses:` + `with:`.",
  spec: ActionSpecSchema,
  rootRules: [NAME_63("Action", "it is referenced from steps")],
  columns: [
    { name: "Description", type: "string", jsonPath: ".spec.description", description: "What it does." },
    age,
  ],
});

/** Every CRD, in install order. */
export const crds: readonly CustomResourceDefinition[] = [
  runtimeCrd,
  runCrd,
  workspaceCrd,
  workflowRunCrd,
  workflowCrd,
  actionCrd,
];
