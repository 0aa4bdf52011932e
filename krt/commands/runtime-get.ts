/** `krt runtime get <name>`: one Runtime. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { getRuntime } from "../runs/fetch.ts";
import { runtimeColumns } from "../runtimes/columns.ts";

export class RuntimeGetCommand extends KrtCommand {
  static override paths = [["runtime", "get"]];
  static override usage = Command.Usage({
    category: "Runtimes",
    description: "Show one Runtime",
    examples: [["Show the bash Runtime as YAML", "krt runtime get bash -o yaml"]],
  });

  runtimeName = Option.String({ name: "name" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const rt = await getRuntime(client, namespace, this.runtimeName);
    this.print(formatObjects([rt], opts.output, runtimeColumns(Date.now(), false), true));
    return undefined;
  }
}
