/** `krt wfrun describe <wfrun>`: the run's DAG as a tree — jobs, steps, child Runs, timing — outputs, conditions, events. */
import { WORKFLOW_RUN_KIND } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { colourEnabled, paint } from "../output/colour.ts";
import { formatObjects } from "../output/print.ts";
import { eventTime, type KubeEvent } from "../runs/describe-text.ts";
import { describeWorkflowRun } from "../workflows/describe-text.ts";
import { getWorkflowRun } from "../workflows/fetch.ts";

export class WorkflowRunDescribeCommand extends KrtCommand {
  static override paths = [["wfrun", "describe"]];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Show a WorkflowRun in detail: its jobs and steps as a tree, outputs, conditions, events",
    details: `
      The jobs are listed in \`needs\` order (those that need nothing first), each with the jobs it
      needs, its phase, duration and reason; under each job its workspace, outputs and artifacts,
      then its steps as a tree: phase, duration, child Run (\`#N\` when the step was retried),
      exit code and reason. A step of an Action is \`<step>.<action step> (<action>)\`. A \`uses\`
      job names its nested WorkflowRun (describe that one the same way). Symbols: ✓ Succeeded,
      ✗ Failed, ● Running, ○ Pending, ⊘ Cancelled, – Skipped; coloured on a terminal unless
      NO_COLOR is set. \`-o json|yaml|name\` prints the WorkflowRun as \`krt wfrun get\` does.
    `,
    examples: [["Describe a WorkflowRun", "krt wfrun describe ci-x7k2p"]],
  });

  wfrunName = Option.String({ name: "wfrun" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const r = await getWorkflowRun(client, namespace, this.wfrunName);
    if (opts.output === "name" || opts.output === "json" || opts.output === "yaml") {
      this.print(formatObjects([r], opts.output, [], true));
      return undefined;
    }
    const events = await client
      .list<KubeEvent>(path(R.events, namespace), {
        fieldSelector: `involvedObject.kind=${WORKFLOW_RUN_KIND},involvedObject.name=${this.wfrunName}`,
      })
      .then((l) => l.items.sort((a, b) => (eventTime(a) ?? "").localeCompare(eventTime(b) ?? "")))
      .catch(() => [] as KubeEvent[]);
    const p = paint(colourEnabled(this.context.stdout, this.context.env));
    this.print(describeWorkflowRun(r, events, { nowMs: Date.now(), paint: p }));
    return undefined;
  }
}
