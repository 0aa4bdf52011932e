/** GETs of Workflows and WorkflowRuns that turn a 404 into an error naming the object and how to list them. */
import { type Workflow, WorkflowResource, type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import { isNotFound, type KubeClient, path } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

export async function getWorkflow(client: KubeClient, namespace: string, name: string): Promise<Workflow> {
  try {
    return await client.get<Workflow>(path(WorkflowResource, namespace, name));
  } catch (e) {
    if (isNotFound(e))
      throw new CliError(
        ExitCode.NotFound,
        `workflow "${name}" not found in namespace "${namespace}"`,
        `list the Workflows with \`krt workflow list -n ${namespace}\``,
      );
    throw e;
  }
}

export async function getWorkflowRun(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<WorkflowRun> {
  try {
    return await client.get<WorkflowRun>(path(WorkflowRunResource, namespace, name));
  } catch (e) {
    if (isNotFound(e))
      throw new CliError(
        ExitCode.NotFound,
        `workflowrun "${name}" not found in namespace "${namespace}"`,
        `list the WorkflowRuns with \`krt wfrun list -n ${namespace}\``,
      );
    throw e;
  }
}
