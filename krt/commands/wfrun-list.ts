/** `krt wfrun list`: WorkflowRuns with their workflow, phase, jobs done, age and duration. */
import { WorkflowPhase, type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { workflowRunColumns } from "../workflows/columns.ts";

const PHASES = Object.values(WorkflowPhase);

export class WorkflowRunListCommand extends KrtCommand {
  static override paths = [
    ["wfrun", "list"],
    ["wfrun", "ls"],
  ];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "List WorkflowRuns: workflow, phase, jobs succeeded/total, age, duration",
    details:
      "Newest last. JOBS is succeeded/total; `-o wide` adds the reason and the count of jobs in each phase. `--phase` filters on the server (the CRD's selectable field `status.phase`; `Pending` also matches runs without a status, on the client); `--workflow` keeps the runs rendered from that Workflow (`spec.workflowRef.name`). Nested WorkflowRuns (made for `uses:` jobs) are listed too, labelled `kruntimes.io/workflowrun=<parent>`.",
    examples: [
      ["Failed runs of the ci Workflow", "krt wfrun list --workflow ci --phase Failed"],
      ["Every WorkflowRun with job phase counts", "krt wfrun list -A -o wide"],
    ],
  });

  phase = Option.String("--phase", { description: `Only runs in this phase (${PHASES.join(", ")})` });
  workflow = Option.String("--workflow", { description: "Only runs rendered from this Workflow" });
  selector = Option.String("-l,--selector", { description: "Label selector" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    const phase = this.phase && PHASES.find((p) => p.toLowerCase() === this.phase?.toLowerCase());
    if (this.phase && !phase)
      throw CliError.usage(`unknown phase "${this.phase}"`, `use one of ${PHASES.join(", ")}`);
    const { client, namespace } = this.connect(opts);
    const list = await client.list<WorkflowRun>(
      path(WorkflowRunResource, opts.allNamespaces ? undefined : namespace),
      {
        labelSelector: this.selector,
        fieldSelector: phase && phase !== "Pending" ? `status.phase=${phase}` : undefined,
      },
    );
    const items = list.items
      .filter((r) => phase !== "Pending" || (r.status?.phase ?? "Pending") === "Pending")
      .filter((r) => this.workflow === undefined || r.spec.workflowRef?.name === this.workflow)
      .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""));
    const text = formatObjects(items, opts.output, workflowRunColumns(Date.now(), opts.allNamespaces), false);
    if (text) this.print(text);
    else
      this.context.stderr.write(
        `No WorkflowRuns found${opts.allNamespaces ? "" : ` in namespace ${namespace}`}.\n`,
      );
    return undefined;
  }
}
