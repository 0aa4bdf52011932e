/** `krt delete <run>…`: delete Runs (a running one is stopped by its pod). */
import { RunResource } from "@kruntimes/api";
import { isNotFound, path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import type { GlobalOptions } from "../options.ts";

export class DeleteCommand extends KrtCommand {
  static override paths = [["delete"], ["rm"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Delete one or more Runs",
    examples: [["Delete two Runs", "krt delete bash-x7k2p bash-q9w3e"]],
  });

  ignoreNotFound = Option.Boolean("--ignore-not-found", false, {
    description: "Succeed when a Run does not exist",
  });
  names = Option.Rest({ name: "run", required: 1 });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    let missing = 0;
    for (const name of this.names) {
      try {
        await client.delete(path(RunResource, namespace, name));
        this.print(`run ${name} deleted`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        if (!this.ignoreNotFound) {
          missing++;
          this.context.stderr.write(`error: run "${name}" not found in namespace "${namespace}"\n`);
        }
      }
    }
    if (missing > 0)
      throw new CliError(
        ExitCode.NotFound,
        `${missing} of ${this.names.length} Runs not found`,
        "list Runs with `krt list`",
      );
    return undefined;
  }
}
