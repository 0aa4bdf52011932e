/** `krt run`: create a task Run, print its name, optionally wait for it to finish. */
import { parseApiDuration, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { followRunLogs } from "../logs/follow-logs.ts";
import { streamSink } from "../logs/log-sink.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { buildRun, checkRunFlags, type RunFlags } from "../runs/build-run.ts";
import { getRuntime } from "../runs/fetch.ts";
import { exitCodeForRun, runSummary } from "../runs/outcome.ts";
import { waitForRun } from "../runs/wait.ts";

export class RunCommand extends KrtCommand {
  static override paths = [["run"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Create a task Run on a Runtime",
    details: `
      Creates a Run in task mode and prints its name. The input is exactly one of: \`--file\` (a
      standalone inline script; \`-\` reads stdin), \`--entrypoint\` (a script file in the runtime
      container, with its arguments after \`--\`), or shell commands after \`--\`.

      The client's wall-clock time in microseconds is recorded in the
      \`kruntimes.io/created-micros\` annotation, for exact latency breakdowns.

      With \`--wait\`, krt watches the Run (no polling) until it ends and exits with the Run's
      exit code, or with 80 (Failed without exit code), 81 (Timeout) or 82 (Cancelled).
      \`--follow\` waits the same way and streams the Run's stdout and stderr live meanwhile (see
      \`krt logs\`); the Run's name then goes to stderr.
    `,
    examples: [
      ["Run a shell command", "krt run --runtime bash -- 'echo hello'"],
      [
        "Run a script file from stdin and wait for it",
        "echo 'print(1)' | krt run --runtime python --file - --wait",
      ],
      ["Run and stream the output live", "krt run --runtime python --follow -- 'print(42)'"],
      [
        "Run a script in the image with arguments",
        "krt run --runtime bash --entrypoint /opt/job.sh -- --fast 3",
      ],
    ],
  });

  runtime = Option.String("--runtime,-r", { description: "Runtime whose warm pods run it (required)" });
  file = Option.String("--file,-f", { description: "Inline script to send: a path, or - for stdin" });
  entrypoint = Option.String("--entrypoint", { description: "Script file in the runtime container to run" });
  env = Option.Array("--env,-e", [], { description: "Environment variable NAME=VALUE (repeatable)" });
  timeout = Option.String("--timeout", { description: "Longest one attempt may run, e.g. 30s, 5m" });
  retries = Option.String("--retries", { description: "Retries after the first attempt (0-9)" });
  ttl = Option.String("--ttl", { description: "Delete the Run this long after it ends: seconds or 10m" });
  name = Option.String("--name", { description: "Name of the Run (default: generated, <runtime>-xxxxx)" });
  wait = Option.Boolean("--wait,-w", false, { description: "Wait until the Run ends; exit with its code" });
  follow = Option.Boolean("--follow,-F", false, {
    description: "Wait like --wait and stream the Run's output live meanwhile",
  });
  waitTimeout = Option.String("--wait-timeout", {
    description: "With --wait/--follow: give up waiting after this duration",
  });
  args = Option.Rest({ name: "args" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (this.follow && opts.output !== "table")
      throw CliError.usage(
        `--follow prints the Run's output; -o ${opts.output} does not apply`,
        "drop -o, or use --wait -o json",
      );
    if (opts.output === "table" || opts.output === "wide") opts = { ...opts, output: "name" };
    const flags: RunFlags = {
      runtime: this.runtime,
      args: this.args,
      file: this.file,
      entrypoint: this.entrypoint,
      env: this.env,
      timeout: this.timeout,
      retries: this.retries,
      ttl: this.ttl,
      name: this.name,
    };
    checkRunFlags(flags);
    const waiting = this.wait || this.follow;
    if (this.waitTimeout !== undefined && !waiting)
      throw CliError.usage(
        "--wait-timeout needs --wait or --follow",
        "add --wait, or use `krt wait <run> --timeout`",
      );
    const waitMs = this.waitTimeout === undefined ? undefined : parseApiDuration(this.waitTimeout);
    if (this.waitTimeout !== undefined && waitMs === undefined)
      throw CliError.usage(`--wait-timeout "${this.waitTimeout}" is not a duration`, "e.g. 30s, 5m");
    if (this.file !== undefined) flags.script = await this.readScript(this.file);

    const { client, namespace } = this.connect(opts);
    await this.checkRuntime(client, namespace, flags.runtime as string);
    const body = buildRun(flags, namespace, this.context.nowMicros());
    const created = await client.create<Run>(path(RunResource, namespace), body);
    const name = created.metadata.name as string;
    if (this.follow) this.context.stderr.write(`run ${name} created\n`);
    else this.print(formatObjects([created], opts.output, [], true));
    if (!waiting) return undefined;
    const done = this.follow
      ? await followRunLogs(
          client,
          namespace,
          name,
          { timeoutMs: waitMs },
          streamSink(this.context.stdout, this.context.stderr),
        )
      : await waitForRun(client, namespace, name, { timeoutMs: waitMs });
    this.context.stderr.write(`${runSummary(done)}\n`);
    return exitCodeForRun(done);
  }

  private async readScript(file: string): Promise<string> {
    try {
      return file === "-" ? await new Response(Bun.stdin.stream()).text() : await Bun.file(file).text();
    } catch (e) {
      throw CliError.usage(`--file ${file}: cannot read it: ${e instanceof Error ? e.message : e}`);
    }
  }

  /** A Run for a missing Runtime would sit Pending: say so now. A 403 on Runtimes is not fatal. */
  private async checkRuntime(client: KubeClient, ns: string, name: string) {
    try {
      await getRuntime(client, ns, name);
    } catch (e) {
      if (!KubeError.is(e, 403)) throw e;
    }
  }
}
