/** `krt wfrun logs <wfrun>`: the output of its child Runs in order, each line prefixed `[job/step]`. */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { streamSink } from "../logs/log-sink.ts";
import type { GlobalOptions } from "../options.ts";
import { getWorkflowRun } from "../workflows/fetch.ts";
import { checkFilter, followWorkflowRunLogs, readWorkflowRunLogs } from "../workflows/logs.ts";

export class WorkflowRunLogsCommand extends KrtCommand {
  static override paths = [["wfrun", "logs"]];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Print the output of a WorkflowRun's steps (its child Runs), or follow it live",
    details: `
      Prints the output of each step's child Run — jobs in \`needs\` order, steps in order — read
      as \`krt logs\` reads a Run (runtimed's log on the pod; the status tails once the records are
      gone), each line prefixed \`[<job>/<step>] \` (stdout lines to stdout, stderr lines to
      stderr). A \`uses\` job's nested WorkflowRun follows, its lines prefixed
      \`[<job>/<nested job>/<step>] \`. Steps that have no child Run (Pending, Skipped) print
      nothing.

      \`--job\` and \`--step\` narrow it (a step that uses an Action matches its Action's steps).
      With \`-f\`, each child Run is printed and followed until it ends, then the next one, waiting
      (by watch) for new steps to start, until the WorkflowRun ended; jobs running in parallel are
      shown one after the other, not interleaved. Exits 0; see \`krt wfrun describe\` for the outcome.
    `,
    examples: [
      ["All the output of a run", "krt wfrun logs ci-x7k2p"],
      ["One step of one job", "krt wfrun logs ci-x7k2p --job build --step compile"],
      ["Follow a running workflow", "krt wfrun logs -f ci-x7k2p"],
    ],
  });

  wfrunName = Option.String({ name: "wfrun" });
  job = Option.String("--job", { description: "Only this job" });
  step = Option.String("--step", { description: "Only this step (of every job, or of --job)" });
  follow = Option.Boolean("-f,--follow", false, { description: "Follow the output live until the run ends" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (opts.output !== "table")
      throw CliError.usage(`krt wfrun logs prints raw output; -o ${opts.output} does not apply`, "drop -o");
    const { client, namespace } = this.connect(opts);
    const sink = streamSink(this.context.stdout, this.context.stderr);
    const filter = { job: this.job, step: this.step };
    if (this.follow) {
      await followWorkflowRunLogs(client, namespace, this.wfrunName, filter, sink);
      return undefined;
    }
    const r = await getWorkflowRun(client, namespace, this.wfrunName);
    checkFilter(r, filter);
    await readWorkflowRunLogs(client, r, filter, sink);
    return undefined;
  }
}
