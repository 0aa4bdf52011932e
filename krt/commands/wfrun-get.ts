/** `krt wfrun get <wfrun>`: one WorkflowRun as a table row, or -o json|yaml|name. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { workflowRunColumns } from "../workflows/columns.ts";
import { getWorkflowRun } from "../workflows/fetch.ts";

export class WorkflowRunGetCommand extends KrtCommand {
  static override paths = [["wfrun", "get"]];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Show one WorkflowRun",
    examples: [["A WorkflowRun with its status as YAML", "krt wfrun get ci-x7k2p -o yaml"]],
  });

  wfrunName = Option.String({ name: "wfrun" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const r = await getWorkflowRun(client, namespace, this.wfrunName);
    this.print(formatObjects([r], opts.output, workflowRunColumns(Date.now(), false), true));
    return undefined;
  }
}
