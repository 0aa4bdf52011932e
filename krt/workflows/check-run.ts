/**
 * `krt workflow trigger` checks the rendered WorkflowRun with the API's own rules before creating
 * it — the Workflows and Actions it calls exist (no cycle between Workflows, not too deep), the job
 * graph, expressions and `with` against the callees' inputs — so a broken definition is reported
 * with its field paths instead of a WorkflowRun that fails at once. The admission webhook and the
 * controller check again; nothing found here is frozen into the run.
 */
import {
  type Action,
  ActionResource,
  resolveDefinitions,
  validateWorkflowRunSpec,
  type Workflow,
  WorkflowResource,
  type WorkflowRunSpec,
} from "@kruntimes/api";
import { isNotFound, type KubeClient, path } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

export async function checkRenderedRun(
  client: KubeClient,
  namespace: string,
  workflow: string,
  spec: WorkflowRunSpec,
): Promise<void> {
  const get = async <T>(p: string): Promise<T | undefined> => {
    try {
      return await client.get<T>(p);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  const resolved = await resolveDefinitions(
    spec.jobs,
    {},
    async (n) => (await get<Workflow>(path(WorkflowResource, namespace, n)))?.spec,
    async (n) => (await get<Action>(path(ActionResource, namespace, n)))?.spec,
    0,
  );
  if ("reason" in resolved)
    throw new CliError(
      ExitCode.Invalid,
      `Workflow "${workflow}" cannot run (${resolved.reason}): ${resolved.message}`,
      resolved.reason === "DefinitionNotFound"
        ? `create it first, or fix the \`uses:\` in Workflow "${workflow}" (krt workflow get ${workflow} -o yaml)`
        : `fix Workflow "${workflow}" (krt workflow get ${workflow} -o yaml) and apply it again`,
    );
  const issues = validateWorkflowRunSpec(spec, resolved.definitions);
  if (issues.length > 0)
    throw new CliError(
      ExitCode.Invalid,
      `Workflow "${workflow}" is invalid:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join("\n")}`,
      `fix it (krt workflow get ${workflow} -o yaml) and apply it again`,
    );
}
