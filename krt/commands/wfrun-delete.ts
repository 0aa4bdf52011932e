/** `krt wfrun delete <wfrun>…`: delete WorkflowRuns. */
import { WorkflowRunResource } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import { DeleteNamedCommand } from "./delete-named.ts";

export class WorkflowRunDeleteCommand extends DeleteNamedCommand {
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

  protected readonly kind = {
    resource: WorkflowRunResource,
    noun: "workflowrun",
    plural: "WorkflowRuns",
    hint: "list them with `krt wfrun list`",
  };
}
