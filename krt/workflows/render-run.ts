/**
 * `krt workflow trigger`: a reusable Workflow rendered into an inline WorkflowRun — its jobs,
 * runtime, env and outputs copied, the checked inputs filled in, `workflowRef` naming where it
 * came from. Called definitions are not frozen here: the controller does that when it starts.
 */
import { API_VERSION, type Workflow, type WorkflowRun } from "@kruntimes/api";

export interface RenderOptions {
  namespace: string;
  /** An exact name; otherwise `generateName` is used. */
  name?: string;
  /** Default: `<workflow>-`. */
  generateName?: string;
  /** Already checked against the Workflow's inputs, defaults applied. */
  inputs: Record<string, string>;
}

export function renderWorkflowRun(wf: Workflow, o: RenderOptions): WorkflowRun {
  const workflow = wf.metadata.name ?? "";
  const s = wf.spec;
  return {
    apiVersion: API_VERSION,
    kind: "WorkflowRun",
    metadata: {
      ...(o.name !== undefined ? { name: o.name } : { generateName: o.generateName ?? `${workflow}-` }),
      namespace: o.namespace,
    },
    spec: {
      workflowRef: { name: workflow },
      ...(Object.keys(o.inputs).length > 0 ? { inputs: o.inputs } : {}),
      ...(s.runtime !== undefined ? { runtime: s.runtime } : {}),
      ...(s.env !== undefined ? { env: s.env } : {}),
      jobs: s.jobs,
      ...(s.outputs !== undefined ? { outputs: s.outputs } : {}),
    },
  };
}
