/** `krt run`: create a task or function Run, print its name, optionally wait for it. */
import { parseApiDuration, type Run, RunPhase, RunResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError, unreadable } from "../errors.ts";
import { followRunLogs } from "../logs/follow-logs.ts";
import { streamSink } from "../logs/log-sink.ts";
import type { GlobalOptions } from "../options.ts";
import { formatObjects } from "../output/print.ts";
import { buildRun, checkNoFunctionFlags, checkRunFlags, type RunFlags } from "../runs/build-run.ts";
import { getRuntime } from "../runs/fetch.ts";
import type { FunctionFlags } from "../runs/function-flags.ts";
import { readManifest } from "../runs/manifest.ts";
import { exitCodeForRun, runSummary } from "../runs/outcome.ts";
import { waitForRun } from "../runs/wait.ts";

export class RunCommand extends KrtCommand {
  static override paths = [["run"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Create a task or function Run on a Runtime",
    details: `
      Creates a Run in task mode and prints its name. The input is exactly one of: \`--file\` (a
      standalone inline script; \`-\` reads stdin), \`--entrypoint\` (a script file in the runtime
      container, with its arguments after \`--\`), or a command after \`--\`: the words are one
      command line, as with \`kubectl run\` (\`-- echo hi\`; a single quoted word keeps its own
      syntax, e.g. \`-- 'make && make test'\` or python's \`-- 'print(42)'\`), sent as the inline
      script.

      With \`--function\` the Run is a function: \`--file\` is the module (python) or script (bash)
      that defines the handler (\`--handler\`, default \`handler\`); the Run registers it on a warm
      pod, becomes Ready and serves \`krt invoke\` calls until it is cancelled, idles out
      (\`--idle-timeout\`) or reaches \`--timeout\` (its whole lifetime). \`--wait\` then waits
      until the Run is Ready (exit 0) or has ended.

      \`--artifact-input RUN/NAME[:PATH]\` (repeatable, tasks only) stages the artifact NAME that
      Run RUN stored into the working directory before the task starts: a file at PATH (default
      NAME), a directory unpacked into PATH. Creating such a Run needs \`get\` on RUN.

      \`--manifest\` creates the Run written in a YAML or JSON file (\`-\` reads stdin) instead of
      building one from flags; \`-n\` and \`--name\` override its namespace and name.

      The client's wall-clock time in microseconds is recorded in the
      \`kruntimes.io/created-micros\` annotation, for exact latency breakdowns.

      With \`--wait\`, krt watches the Run (no polling) until it ends and exits with the Run's
      exit code, or with 80 (Failed without exit code), 81 (Timeout) or 82 (Cancelled). A task's
      output is printed when it ends (the tails kept in its status: stdout to stdout, stderr to
      stderr) and its name goes to stderr; with \`-o\` the created Run is printed instead.
      \`--follow\` waits the same way and streams the Run's stdout and stderr live meanwhile (see
      \`krt logs\`); the Run's name then goes to stderr.
    `,
    examples: [
      ["Run a command and print its output", "krt run --runtime bash --wait -- echo hello"],
      [
        "Run a script file from stdin and wait for it",
        "echo 'print(1)' | krt run --runtime python --file - --wait",
      ],
      ["Run and stream the output live", "krt run --runtime python --follow -- 'print(42)'"],
      [
        "Run a script in the image with arguments",
        "krt run --runtime bash --entrypoint /opt/job.sh -- --fast 3",
      ],
      [
        "Start a python function and wait until it serves",
        "krt run --function --runtime python --handler handler --file handler.py --concurrency 4 --idle-timeout 30m --wait",
      ],
      [
        "Run with another Run's artifacts staged in its working directory",
        "krt run --runtime bash --artifact-input build/report.txt --artifact-input build/site:public/site --wait -- 'cat report.txt; ls public/site'",
      ],
      ["Create a Run from a manifest", "krt run --manifest run.yaml"],
    ],
  });

  runtime = Option.String("--runtime,-r", { description: "Runtime whose warm pods run it (required)" });
  file = Option.String("--file,-f", { description: "Inline script to send: a path, or - for stdin" });
  entrypoint = Option.String("--entrypoint", { description: "Script file in the runtime container to run" });
  env = Option.Array("--env,-e", [], { description: "Environment variable NAME=VALUE (repeatable)" });
  artifactInputs = Option.Array("--artifact-input", [], {
    description: "Stage another Run's artifact before the task starts: RUN/NAME[:PATH] (repeatable)",
  });
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
  function = Option.Boolean("--function", false, {
    description: "Create a function Run: --file defines the handler; callers use `krt invoke`",
  });
  handler = Option.String("--handler", {
    description: "With --function: the handler's name (default handler)",
  });
  concurrency = Option.String("--concurrency", {
    description: "With --function: invocations served at once (default 1, at most 64)",
  });
  idleTimeout = Option.String("--idle-timeout", {
    description: "With --function: end the Run after this long without an invocation (default never)",
  });
  invocationTimeout = Option.String("--invocation-timeout", {
    description: "With --function: default and longest time of one invocation (default 30s, at most 15m)",
  });
  maxRequestBytes = Option.String("--max-request-bytes", {
    description: "With --function: largest request body, e.g. 4Mi (default 1Mi, at most 16Mi)",
  });
  maxResponseBytes = Option.String("--max-response-bytes", {
    description: "With --function: largest response body, e.g. 4Mi (default 1Mi, at most 16Mi)",
  });
  manifest = Option.String("--manifest", {
    description: "Create the Run written in this YAML/JSON file (- reads stdin) instead of from flags",
  });
  args = Option.Rest({ name: "args" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (this.follow && opts.output !== "table")
      throw CliError.usage(
        `--follow prints the Run's output; -o ${opts.output} does not apply`,
        "drop -o, or use --wait -o json",
      );
    const outputGiven = opts.output === "table" || opts.output === "wide" ? undefined : opts.output;
    if (outputGiven === undefined) opts = { ...opts, output: "name" };
    const fn: FunctionFlags = {
      handler: this.handler,
      concurrency: this.concurrency,
      idleTimeout: this.idleTimeout,
      invocationTimeout: this.invocationTimeout,
      maxRequestBytes: this.maxRequestBytes,
      maxResponseBytes: this.maxResponseBytes,
    };
    if (!this.function) checkNoFunctionFlags(fn);
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
      artifactInputs: this.artifactInputs,
      ...(this.function ? { function: fn } : {}),
    };
    if (this.manifest === undefined) checkRunFlags(flags);
    else this.checkManifestFlags();
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
    const body =
      this.manifest !== undefined
        ? await readManifest(this.manifest, {
            namespace: opts.namespace,
            defaultNamespace: namespace,
            name: this.name,
            createdMicros: this.context.nowMicros(),
          })
        : buildRun(flags, namespace, this.context.nowMicros());
    const ns = body.metadata.namespace as string;
    await this.checkRuntime(client, ns, body.spec.runtime);
    const created = await client.create<Run>(path(RunResource, ns), body);
    const name = created.metadata.name as string;
    const isFunction = created.spec.mode.function !== undefined;
    // A task waited for without -o shows its output when it ends, like `docker run`: the name
    // then goes to stderr, as with --follow.
    const showTails = this.wait && !this.follow && !isFunction && outputGiven === undefined;
    if (this.follow || showTails) this.context.stderr.write(`run ${name} created\n`);
    else this.print(formatObjects([created], opts.output, [], true));
    if (!waiting) return undefined;
    const done = this.follow
      ? await followRunLogs(
          client,
          ns,
          name,
          { timeoutMs: waitMs },
          streamSink(this.context.stdout, this.context.stderr),
        )
      : await waitForRun(client, ns, name, {
          timeoutMs: waitMs,
          ...(isFunction ? { until: (r: Run) => r.status?.phase === RunPhase.Ready } : {}),
        });
    if (showTails) this.writeTails(done);
    this.context.stderr.write(`${runSummary(done)}\n`);
    return exitCodeForRun(done);
  }

  /** The ended task's stdout and stderr tails (status.stdoutTail/stderrTail), each to its stream. */
  private writeTails(run: Run): void {
    const s = run.status ?? {};
    if (s.stdoutTail) this.context.stdout.write(s.stdoutTail);
    if (s.stderrTail) this.context.stderr.write(s.stderrTail);
    if (s.stdoutTruncated || s.stderrTruncated)
      this.context.stderr.write(
        `(only the end of the output is kept in the Run's status: \`krt logs ${run.metadata.name}\` shows all of it)\n`,
      );
  }

  /** --manifest carries the whole Run: flags that would build one are refused, not ignored. */
  private checkManifestFlags(): void {
    const building: [string, unknown][] = [
      ["--runtime", this.runtime],
      ["--file", this.file],
      ["--entrypoint", this.entrypoint],
      ["--timeout", this.timeout],
      ["--retries", this.retries],
      ["--ttl", this.ttl],
      ["--function", this.function || undefined],
      ["-- args", this.args.length ? this.args : undefined],
      ["--env", this.env.length ? this.env : undefined],
      ["--artifact-input", this.artifactInputs.length ? this.artifactInputs : undefined],
    ];
    const given = building.filter(([, v]) => v !== undefined).map(([k]) => k);
    if (given.length)
      throw CliError.usage(
        `--manifest excludes ${given.join(", ")}: the manifest holds the whole Run`,
        "edit the manifest, or drop --manifest and build the Run from flags",
      );
  }

  private async readScript(file: string): Promise<string> {
    try {
      return file === "-" ? await new Response(Bun.stdin.stream()).text() : await Bun.file(file).text();
    } catch (e) {
      throw unreadable("--file", file, e);
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
