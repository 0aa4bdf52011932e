/** `krt completion bash|zsh`: a shell completion script for commands, flags and Run names. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import type { GlobalOptions } from "../options.ts";
import { bashCompletion, type CompletionEntry, zshCompletion } from "./completion-scripts.ts";

export class CompletionCommand extends KrtCommand {
  static override paths = [["completion"]];
  static override usage = Command.Usage({
    category: "General",
    description: "Print a shell completion script",
    details:
      "Completes commands, their flags and, for commands taking a Run, WorkflowRun or Workflow, the names of those in the namespace.",
    examples: [
      ["Enable for bash in this shell", "source <(krt completion bash)"],
      ["Install for zsh", "krt completion zsh > ~/.zfunc/_krt  # with ~/.zfunc in $fpath"],
    ],
  });

  shell = Option.String({ name: "shell" });

  async run(_opts: GlobalOptions): Promise<number | undefined> {
    const commands: CompletionEntry[] = this.cli.definitions().map((d) => ({
      path: d.path
        .replace(/^krt\s*/, "")
        .split(" ")
        .filter((w) => /^[a-z]/.test(w))
        .join(" "),
      flags: d.options.flatMap((o) => o.definition.split(/[ ,]+/).filter((w) => w.startsWith("-"))),
      names: namesCommand(d.usage),
    }));
    if (this.shell === "bash") this.print(bashCompletion(commands));
    else if (this.shell === "zsh") this.print(zshCompletion(commands));
    else
      throw CliError.usage(
        `unsupported shell "${this.shell}"`,
        "use `krt completion bash` or `krt completion zsh`",
      );
    return undefined;
  }
}

/** What lists the names a command's positional takes, by its usage (`<run>`, `<wfrun>`, `<workflow>`). */
export function namesCommand(usage: string): string | undefined {
  if (/<run>/.test(usage)) return "list";
  if (/<wfrun>/.test(usage)) return "wfrun list";
  if (/<workflow>/.test(usage)) return "workflow list";
  return undefined;
}
