/** `krt runtime list`: Runtimes with desired vs ready replicas and per-pod capacity. */
import { type Runtime, RuntimeResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { runtimeColumns } from "../runtimes/columns.ts";

export class RuntimeListCommand extends KrtCommand {
  static override paths = [
    ["runtime", "list"],
    ["runtime", "ls"],
  ];
  static override usage = Command.Usage({
    category: "Runtimes",
    description: "List Runtimes: desired vs ready replicas, capacity per pod, Runs waiting for a pod",
    examples: [["Runtimes in every namespace", "krt runtime list -A"]],
  });

  selector = Option.String("-l,--selector", { description: "Label selector" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    const { client, namespace } = this.connect(opts);
    const list = await client.list<Runtime>(
      path(RuntimeResource, opts.allNamespaces ? undefined : namespace),
      {
        labelSelector: this.selector,
      },
    );
    const text = formatObjects(
      list.items,
      opts.output,
      runtimeColumns(Date.now(), opts.allNamespaces),
      false,
    );
    if (text) this.print(text);
    else
      this.context.stderr.write(
        `No Runtimes found${opts.allNamespaces ? "" : ` in namespace ${namespace}`}.\n`,
      );
    return undefined;
  }
}
