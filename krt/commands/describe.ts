/** `krt describe <run>`: spec, status, microsecond timing breakdown, conditions and events. */
import { RUN_KIND } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { describeRun, eventTime, type KubeEvent } from "../runs/describe-text.ts";
import { getRun } from "../runs/fetch.ts";

export class DescribeCommand extends KrtCommand {
  static override paths = [["describe"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Show a Run in detail, with its timing breakdown and events",
    details:
      "The timing section is in microseconds from `status.timing`: scheduled − created, started − scheduled, finished − started. `-o json|yaml|name` prints the Run as `krt get` does.",
    examples: [["Describe a Run", "krt describe bash-x7k2p"]],
  });

  runName = Option.String({ name: "run" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const run = await getRun(client, namespace, this.runName);
    if (opts.output === "name" || opts.output === "json" || opts.output === "yaml") {
      this.print(formatObjects([run], opts.output, [], true));
      return undefined;
    }
    const events = await client
      .list<KubeEvent>(path(R.events, namespace), {
        fieldSelector: `involvedObject.kind=${RUN_KIND},involvedObject.name=${this.runName}`,
      })
      .then((l) => l.items.sort((a, b) => (eventTime(a) ?? "").localeCompare(eventTime(b) ?? "")))
      .catch(() => [] as KubeEvent[]);
    this.print(describeRun(run, events, Date.now()));
    return undefined;
  }
}
