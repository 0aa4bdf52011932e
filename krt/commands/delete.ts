/** `krt delete <run>…`: delete Runs (a running one is stopped by its pod). */
import { RunResource } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import { DeleteNamedCommand } from "./delete-named.ts";

export class DeleteCommand extends DeleteNamedCommand {
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

  protected readonly kind = {
    resource: RunResource,
    noun: "run",
    plural: "Runs",
    hint: "list Runs with `krt list`",
  };
}
