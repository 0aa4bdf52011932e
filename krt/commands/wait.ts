/** `krt wait <run>`: block (by watch) until the Run ends; exit with its code. */
import { parseApiDuration } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { exitCodeForRun, runSummary } from "../runs/outcome.ts";
import { waitForRun } from "../runs/wait.ts";

export class WaitCommand extends KrtCommand {
  static override paths = [["wait"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Wait for a Run to end and exit with its exit code",
    details:
      "Watches the Run (no polling). Exits with the Run's exit code; 80 when it Failed without one, 81 on Timeout, 82 when Cancelled, 75 when `--timeout` passes first. `-o json|yaml` prints the final Run.",
    examples: [["Wait at most a minute", "krt wait bash-x7k2p --timeout 1m"]],
  });

  runName = Option.String({ name: "run" });
  timeout = Option.String("--timeout", { description: "Give up waiting after this duration, e.g. 30s" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const timeoutMs = this.timeout === undefined ? undefined : parseApiDuration(this.timeout);
    if (this.timeout !== undefined && timeoutMs === undefined)
      throw CliError.usage(`--timeout "${this.timeout}" is not a duration`, "e.g. 30s, 5m");
    const { client, namespace } = this.connect(opts);
    const run = await waitForRun(client, namespace, this.runName, { timeoutMs });
    if (opts.output === "json" || opts.output === "yaml")
      this.print(formatObjects([run], opts.output, [], true));
    this.context.stderr.write(`${runSummary(run)}\n`);
    return exitCodeForRun(run);
  }
}
