/** `krt workflow trigger <workflow>`: render a Workflow with `--with` inputs into a WorkflowRun and create it. */
import { parseApiDuration, type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import YAML from "yaml";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import type { GlobalOptions } from "../options.ts";
import { colourEnabled, paint } from "../output/colour.ts";
import { formatObjects } from "../output/print.ts";
import { checkRenderedRun } from "../workflows/check-run.ts";
import { getWorkflow } from "../workflows/fetch.ts";
import { parseWithFlags, resolveInputs } from "../workflows/inputs.ts";
import { exitCodeForWorkflowRun, workflowRunSummary } from "../workflows/outcome.ts";
import { renderWorkflowRun } from "../workflows/render-run.ts";
import { waitForWorkflowRun } from "../workflows/wait.ts";

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export class WorkflowTriggerCommand extends KrtCommand {
  static override paths = [["workflow", "trigger"]];
  static override usage = Command.Usage({
    category: "Workflows",
    description: "Run a Workflow: create a WorkflowRun from it with --with inputs",
    details: `
      Reads the Workflow and renders it into an inline WorkflowRun: its jobs, runtime, env and
      outputs are copied, \`spec.inputs\` holds the \`--with\` values and \`spec.workflowRef.name\`
      names the Workflow. The values are checked against the Workflow's typed inputs first: an
      unknown name, a missing required input, or a \`number\`/\`boolean\` input given something
      else is an error (exit 64) that lists the Workflow's inputs; inputs not given take their
      defaults. The rendered run is then checked with the rules the admission webhook applies —
      the Workflows and Actions it calls exist and do not call each other in a cycle, the job
      graph, expressions, \`with\` against the callees' inputs — and a problem is an error (exit
      65) naming each field. The Workflows and Actions it calls are frozen by the controller when
      the run starts, so editing them later does not change it.

      The name is generated from the Workflow's (\`<workflow>-xxxxx\`) unless \`--name\` gives
      one or \`--generate-name=<prefix>\` another prefix. Prints the WorkflowRun's name (\`-o
      yaml|json\`: the created object). \`--dry-run\` prints the rendered WorkflowRun (YAML
      unless \`-o json\`) without creating it.

      With \`--wait\`, krt watches the run (no polling), reports each job's phase changes on
      stderr, prints a summary of the jobs and steps when it ends (stderr), and exits 0 when it
      Succeeded, 90 when it Failed, 91 when it was Cancelled (75 when \`--wait-timeout\` passed).
    `,
    examples: [
      ["Trigger with two inputs", "krt workflow trigger ci --with version=1.2 --with debug=true"],
      ["Trigger and wait for the outcome", "krt workflow trigger ci --with version=1.2 --wait"],
      ["See the WorkflowRun it would create", "krt workflow trigger ci --with version=1.2 --dry-run"],
    ],
  });

  workflowName = Option.String({ name: "workflow" });
  with = Option.Array("--with", [], { description: "An input NAME=VALUE (repeatable)" });
  name = Option.String("--name", { description: "Name of the WorkflowRun (default: generated)" });
  generateName = Option.String("--generate-name", {
    tolerateBoolean: true,
    description: "Generate the name (the default); =PREFIX sets the prefix (default <workflow>-)",
  });
  dryRun = Option.Boolean("--dry-run", false, {
    description: "Print the WorkflowRun instead of creating it",
  });
  wait = Option.Boolean("--wait,-w", false, {
    description: "Wait until the run ends; exit 0 Succeeded, 90 Failed, 91 Cancelled",
  });
  waitTimeout = Option.String("--wait-timeout", { description: "With --wait: give up after this duration" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { prefix, waitMs } = this.checkFlags(opts);
    const given = parseWithFlags(this.with);
    const { client, namespace } = this.connect(opts);
    const wf = await getWorkflow(client, namespace, this.workflowName);
    const inputs = resolveInputs(this.workflowName, wf.spec.inputs, given);
    const body = renderWorkflowRun(wf, { namespace, name: this.name, generateName: prefix, inputs });
    await checkRenderedRun(client, namespace, this.workflowName, body.spec);
    if (this.dryRun) {
      this.print(opts.output === "json" ? JSON.stringify(body, null, 2) : YAML.stringify(body));
      return undefined;
    }
    const created = await client.create<WorkflowRun>(path(WorkflowRunResource, namespace), body);
    const name = created.metadata.name ?? "";
    const output = opts.output === "table" || opts.output === "wide" ? "name" : opts.output;
    this.print(formatObjects([created], output, [], true));
    if (!this.wait) return undefined;

    const err = this.context.stderr;
    const jobPhases = new Map<string, string>();
    const final = await waitForWorkflowRun(client, namespace, name, {
      timeoutMs: waitMs,
      onUpdate: (r) => {
        for (const [job, st] of Object.entries(r.status?.jobs ?? {})) {
          if (jobPhases.get(job) === st.phase) continue;
          jobPhases.set(job, st.phase);
          err.write(
            `job ${job}: ${st.phase}${st.reason && st.reason !== st.phase ? ` (${st.reason})` : ""}\n`,
          );
        }
      },
    });
    err.write(`${workflowRunSummary(final, Date.now(), paint(colourEnabled(err, this.context.env)))}\n`);
    return exitCodeForWorkflowRun(final);
  }

  private checkFlags(opts: GlobalOptions): { prefix?: string; waitMs?: number } {
    if (this.name !== undefined && this.generateName !== undefined)
      throw CliError.usage("--name and --generate-name exclude each other", "pass one of them");
    if (this.name !== undefined && !NAME.test(this.name))
      throw CliError.usage(
        `--name "${this.name}" is not a valid name: lower-case letters, digits, '-' and '.'`,
      );
    const prefix = typeof this.generateName === "string" ? this.generateName : undefined;
    if (prefix !== undefined && !/^[a-z0-9]([-a-z0-9.]*)$/.test(prefix))
      throw CliError.usage(
        `--generate-name="${prefix}" is not a valid prefix: lower-case letters, digits, '-' and '.'`,
      );
    if (this.dryRun && this.wait)
      throw CliError.usage("--dry-run creates nothing to wait for", "drop --wait");
    if (opts.output === "wide") throw CliError.usage("-o wide does not apply", "use -o name, yaml or json");
    if (this.waitTimeout !== undefined && !this.wait)
      throw CliError.usage("--wait-timeout needs --wait", "add --wait");
    const waitMs = this.waitTimeout === undefined ? undefined : parseApiDuration(this.waitTimeout);
    if (this.waitTimeout !== undefined && waitMs === undefined)
      throw CliError.usage(`--wait-timeout "${this.waitTimeout}" is not a duration`, "e.g. 30s, 5m");
    return { prefix, waitMs };
  }
}
