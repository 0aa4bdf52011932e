/** `krt list`: Runs in a namespace (or all), filtered by Runtime, phase and label selector. */
import { RUN_PHASES, type Run, RunResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { runColumns } from "../runs/columns.ts";

export class ListCommand extends KrtCommand {
  static override paths = [["list"], ["ls"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "List Runs",
    details:
      "Newest last. `--runtime`, `--phase` and `-l` filter on the server (the Run CRD's selectable fields `spec.runtime` and `status.phase`, and the label selector); `--phase Pending` also matches Runs that have no status yet, so that one is filtered on the client.",
    examples: [
      ["Failed Runs of the bash Runtime", "krt list --runtime bash --phase Failed"],
      ["Every Run in every namespace", "krt list -A"],
    ],
  });

  runtime = Option.String("--runtime,-r", { description: "Only Runs of this Runtime" });
  phase = Option.String("--phase", { description: `Only Runs in this phase (${RUN_PHASES.join(", ")})` });
  selector = Option.String("-l,--selector", { description: "Label selector, e.g. team=ci,tier!=dev" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    const phase = this.phase && RUN_PHASES.find((p) => p.toLowerCase() === this.phase?.toLowerCase());
    if (this.phase && !phase)
      throw CliError.usage(`unknown phase "${this.phase}"`, `use one of ${RUN_PHASES.join(", ")}`);
    const { client, namespace } = this.connect(opts);
    const fields = [
      ...(this.runtime ? [`spec.runtime=${this.runtime}`] : []),
      ...(phase && phase !== "Pending" ? [`status.phase=${phase}`] : []),
    ];
    const list = await client.list<Run>(path(RunResource, opts.allNamespaces ? undefined : namespace), {
      labelSelector: this.selector,
      fieldSelector: fields.length ? fields.join(",") : undefined,
    });
    const runs = list.items
      .filter((r) => phase !== "Pending" || (r.status?.phase ?? "Pending") === phase)
      .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""));
    const text = formatObjects(runs, opts.output, runColumns(Date.now(), opts.allNamespaces), false);
    if (text) this.print(text);
    else
      this.context.stderr.write(`No Runs found${opts.allNamespaces ? "" : ` in namespace ${namespace}`}.\n`);
    return undefined;
  }
}
