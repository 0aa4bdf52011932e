/** `krt get <run>`: one Run as a table row, or -o json|yaml|name. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { runColumns } from "../runs/columns.ts";
import { getRun } from "../runs/fetch.ts";

export class GetCommand extends KrtCommand {
  static override paths = [["get"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Show one Run",
    examples: [["Show a Run as YAML", "krt get bash-x7k2p -o yaml"]],
  });

  runName = Option.String({ name: "run" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const run = await getRun(client, namespace, this.runName);
    this.print(formatObjects([run], opts.output, runColumns(Date.now(), false), true));
    return undefined;
  }
}
