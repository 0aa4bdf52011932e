/** GETs that turn a 404 into an error naming the object and the command that lists its kind. */
import { type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { isNotFound, type KubeClient, path } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

export async function getRun(client: KubeClient, namespace: string, name: string): Promise<Run> {
  try {
    return await client.get<Run>(path(RunResource, namespace, name));
  } catch (e) {
    if (isNotFound(e))
      throw new CliError(
        ExitCode.NotFound,
        `run "${name}" not found in namespace "${namespace}"`,
        "list Runs with `krt list` (add -A for all namespaces)",
      );
    throw e;
  }
}

export async function getRuntime(client: KubeClient, namespace: string, name: string): Promise<Runtime> {
  try {
    return await client.get<Runtime>(path(RuntimeResource, namespace, name));
  } catch (e) {
    if (isNotFound(e))
      throw new CliError(
        ExitCode.NotFound,
        `runtime "${name}" not found in namespace "${namespace}"`,
        `list the Runtimes with \`krt runtime list -n ${namespace}\``,
      );
    throw e;
  }
}
