/** `krt wfrun delete <wfrun>…`: delete WorkflowRuns. */
import { WorkflowRunResource } from "@kruntimes/api";
import { isNotFound, path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import type { GlobalOptions } from "../options.ts";

export class WorkflowRunDeleteCommand extends KrtCommand {
  static override paths = [
    ["wfrun", "delete"],
    ["wfrun", "rm"],
  ];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Delete one or more WorkflowRuns",
    details:
      "Deletes the WorkflowRun objects. Their child Runs, job workspaces and nested WorkflowRuns carry owner references to them and are deleted with them by Kubernetes' garbage collector. Deleting a running WorkflowRun stops its running steps that way; `krt wfrun cancel` stops them and keeps the record.",
    examples: [["Delete two WorkflowRuns", "krt wfrun delete ci-x7k2p ci-q9w3e"]],
  });

  ignoreNotFound = Option.Boolean("--ignore-not-found", false, {
    description: "Succeed when a WorkflowRun does not exist",
  });
  names = Option.Rest({ name: "wfrun", required: 1 });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    let missing = 0;
    for (const name of this.names) {
      try {
        await client.delete(path(WorkflowRunResource, namespace, name));
        this.print(`workflowrun ${name} deleted`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        if (!this.ignoreNotFound) {
          missing++;
          this.context.stderr.write(`error: workflowrun "${name}" not found in namespace "${namespace}"\n`);
        }
      }
    }
    if (missing > 0)
      throw new CliError(
        ExitCode.NotFound,
        `${missing} of ${this.names.length} WorkflowRuns not found`,
        "list them with `krt wfrun list`",
      );
    return undefined;
  }
}
