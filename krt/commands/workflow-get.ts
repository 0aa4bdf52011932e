/** `krt workflow get <workflow>`: one Workflow as a table row, or -o json|yaml|name. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { workflowColumns } from "../workflows/columns.ts";
import { getWorkflow } from "../workflows/fetch.ts";

export class WorkflowGetCommand extends KrtCommand {
  static override paths = [["workflow", "get"]];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Show one Workflow",
    examples: [["A Workflow's jobs and inputs as YAML", "krt workflow get ci -o yaml"]],
  });

  workflowName = Option.String({ name: "workflow" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const wf = await getWorkflow(client, namespace, this.workflowName);
    this.print(formatObjects([wf], opts.output, workflowColumns(Date.now(), false), true));
    return undefined;
  }
}
