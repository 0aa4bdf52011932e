/** `krt wfrun cancel <wfrun>`: stop a WorkflowRun now (`spec.termination.mode: Immediate`, merge patch). */
import { TerminationMode, type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import type { GlobalOptions } from "../options.ts";
import { getWorkflowRun } from "../workflows/fetch.ts";
import { workflowRunEnded } from "../workflows/wait.ts";

export class WorkflowRunCancelCommand extends KrtCommand {
  static override paths = [["wfrun", "cancel"]];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Cancel a WorkflowRun",
    details:
      "Sets `spec.termination.mode: Immediate`: the controller cancels every running child Run (and nested WorkflowRun), starts nothing new, and the run ends Cancelled once its children have stopped. A run that already ended is left alone. The WorkflowRun and its children stay until `krt wfrun delete`.",
    examples: [["Cancel a WorkflowRun", "krt wfrun cancel ci-x7k2p"]],
  });

  wfrunName = Option.String({ name: "wfrun" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const r = await getWorkflowRun(client, namespace, this.wfrunName);
    if (workflowRunEnded(r)) {
      this.context.stderr.write(
        `workflowrun ${this.wfrunName} already ended (${r.status?.phase}); nothing to cancel\n`,
      );
      return undefined;
    }
    if (r.spec.termination?.mode === TerminationMode.Immediate) {
      this.print(`workflowrun ${this.wfrunName} is already being cancelled`);
      return undefined;
    }
    await client.patch<WorkflowRun>(
      path(WorkflowRunResource, namespace, this.wfrunName),
      { spec: { termination: { mode: TerminationMode.Immediate } } },
      "merge",
    );
    this.print(
      `workflowrun ${this.wfrunName} cancel requested: running steps are cancelled and nothing new starts; it ends Cancelled (watch with \`krt wfrun describe ${this.wfrunName}\`)`,
    );
    return undefined;
  }
}
