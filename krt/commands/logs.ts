/** `krt logs <run> [-f]`: a Run's stdout and stderr, from runtimed's log on its pod, or live. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { followRunLogs } from "../logs/follow-logs.ts";
import { callSink, streamSink } from "../logs/log-sink.ts";
import { readRunLogs } from "../logs/read-logs.ts";
import type { GlobalOptions } from "../options.ts";
import { getRun } from "../runs/fetch.ts";

export class LogsCommand extends KrtCommand {
  static override paths = [["logs"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Print a Run's output (stdout and stderr), or follow it live",
    details: `
      Reads the output records runtimed writes to its container log on the Run's pod (one JSON line
      per output line) through the API server, and prints each line to stdout or stderr as the Run
      printed it. Needs \`get\` on pods/log in the Run's namespace.

      All attempts are shown by default, each after an \`==> attempt N <==\` line on stderr when
      there is more than one; \`--attempt N\` shows one. \`status.assignment\` names only the current
      attempt's pod, so earlier attempts are looked up on the Runtime's pods that still exist; an
      attempt whose pod is gone is reported as such. When the latest attempt's records are gone but
      the Run ended, krt prints \`status.stdoutTail\`/\`stderrTail\` (at most 16 KiB each) and says so
      on stderr.

      A function's lines belong to invocations and a session's to operations: \`--prefix\` puts
      \`[<invocation or operation ID>] \` before each such line, \`--call ID\` shows only the lines of
      one (the ID \`krt invoke -i\` prints, or the gateway returns as \`invocation_id\`/\`operation_id\`).
      A session's audit records (who called which operation, its bounded arguments, result and
      duration) are printed on stderr too, one \`audit: <operation> by <caller>: <result> …\` line each.

      With \`-f\`, krt prints what was already written, then follows the output live until the Run
      ends (moving to the next attempt's pod on a retry), and exits 0. \`krt run --follow\` does the
      same for a new Run and exits with the Run's exit code.
    `,
    examples: [
      ["Print the output of a finished Run", "krt logs bash-x7k2p"],
      ["Follow a running Run", "krt logs -f bash-x7k2p"],
      ["Only the first attempt", "krt logs bash-x7k2p --attempt 1"],
      ["A function's output, each line with its invocation", "krt logs hello --prefix"],
      ["One invocation's output", "krt logs hello --call inv-3f9c2a"],
    ],
  });

  runName = Option.String({ name: "run" });
  follow = Option.Boolean("-f,--follow", false, { description: "Follow the output live until the Run ends" });
  attempt = Option.String("--attempt", { description: "Only this attempt (1, 2, …); default: all attempts" });
  prefix = Option.Boolean("--prefix", false, {
    description: "Put the invocation (function) or operation (session) ID before each line",
  });
  call = Option.String("--call", {
    description: "Only the lines of this function invocation or session operation",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (opts.output !== "table")
      throw CliError.usage(`krt logs prints raw output; -o ${opts.output} does not apply`, "drop -o");
    const attempt = this.attempt === undefined ? undefined : Number(this.attempt);
    if (attempt !== undefined && !(Number.isInteger(attempt) && attempt >= 1))
      throw CliError.usage(`--attempt "${this.attempt}" must be a whole number from 1`);
    const { client, namespace } = this.connect(opts);
    const sink = callSink(streamSink(this.context.stdout, this.context.stderr), {
      ...(this.call !== undefined ? { only: this.call } : {}),
      prefix: this.prefix,
    });
    if (this.follow) await followRunLogs(client, namespace, this.runName, { attempt }, sink);
    else
      await readRunLogs(
        client,
        await getRun(client, namespace, this.runName),
        { attempt, tailFallback: true },
        sink,
      );
    return undefined;
  }
}
