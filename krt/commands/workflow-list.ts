/** `krt workflow list`: the reusable Workflows of a namespace (or all). */
import { type Workflow, WorkflowResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { workflowColumns } from "../workflows/columns.ts";

export class WorkflowListCommand extends KrtCommand {
  static override paths = [
    ["workflow", "list"],
    ["workflow", "ls"],
  ];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "List Workflows (reusable definitions): jobs, inputs (* required)",
    examples: [["Workflows in every namespace", "krt workflow list -A"]],
  });

  selector = Option.String("-l,--selector", { description: "Label selector" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    const { client, namespace } = this.connect(opts);
    const list = await client.list<Workflow>(
      path(WorkflowResource, opts.allNamespaces ? undefined : namespace),
      { labelSelector: this.selector },
    );
    const items = list.items.sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
    const text = formatObjects(items, opts.output, workflowColumns(Date.now(), opts.allNamespaces), false);
    if (text) this.print(text);
    else
      this.context.stderr.write(
        `No Workflows found${opts.allNamespaces ? "" : ` in namespace ${namespace}`}.\n`,
      );
    return undefined;
  }
}
