/** `krt cancel <run>`: ask the Run to stop now (`spec.termination.mode: Immediate`, merge patch). */
import { isTerminalPhase, type Run, RunResource, TerminationMode } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { getRun } from "../runs/fetch.ts";

export class CancelCommand extends KrtCommand {
  static override paths = [["cancel"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Cancel a Run",
    details:
      "Sets `spec.termination.mode: Immediate`; the Run ends in phase Cancelled. A Run that already ended is left alone. The Run object stays until `krt delete` or its TTL.",
    examples: [["Cancel a Run", "krt cancel bash-x7k2p"]],
  });

  runName = Option.String({ name: "run" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const run = await getRun(client, namespace, this.runName);
    if (isTerminalPhase(run.status?.phase)) {
      this.context.stderr.write(
        `run ${this.runName} already ended (${run.status?.phase}); nothing to cancel\n`,
      );
      return undefined;
    }
    await client.patch<Run>(
      path(RunResource, namespace, this.runName),
      { spec: { termination: { mode: TerminationMode.Immediate } } },
      "merge",
    );
    this.print(`run ${this.runName} cancel requested`);
    return undefined;
  }
}
