/**
 * `krt session create` (a session Run: an exclusive, stateful workspace on a warm pod) and
 * `krt session close` (drain it: `spec.termination.mode: Drain`).
 */
import {
  Annotations,
  API_VERSION,
  isDuration,
  isTerminalPhase,
  parseApiDuration,
  RUN_KIND,
  type Run,
  RunPhase,
  RunResource,
  TerminationMode,
} from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import type { GlobalOptions } from "../options.ts";
import { getRun } from "../runs/fetch.ts";
import { waitForRun } from "../runs/wait.ts";

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The session Run `krt session create` sends. */
export function sessionRun(o: {
  namespace: string;
  runtime: string;
  name?: string;
  idleTimeout?: string;
  timeout?: string;
  createdMicros: number;
}): Run {
  for (const [flag, v] of [
    ["--idle-timeout", o.idleTimeout],
    ["--timeout", o.timeout],
  ] as const)
    if (v !== undefined && !isDuration(v))
      throw CliError.usage(`${flag} "${v}" is not a duration`, "e.g. 30s, 15m, 1h30m");
  if (o.name !== undefined && !NAME.test(o.name))
    throw CliError.usage(`--name "${o.name}" is not a valid name: lower-case letters, digits, '-' and '.'`);
  return {
    apiVersion: API_VERSION,
    kind: RUN_KIND,
    metadata: {
      ...(o.name ? { name: o.name } : { generateName: `${o.runtime}-session-` }),
      namespace: o.namespace,
      annotations: { [Annotations.createdMicros]: String(o.createdMicros) },
    },
    spec: {
      runtime: o.runtime,
      mode: { session: o.idleTimeout ? { idleTimeout: o.idleTimeout } : {} },
      ...(o.timeout ? { timeout: o.timeout } : {}),
    },
  } as Run;
}

export class SessionCreateCommand extends KrtCommand {
  static override paths = [["session", "create"]];
  static override usage = Command.Usage({
    category: "Sessions",
    description: "Create a session Run",
    details: `
      Creates a session Run and prints its name: an exclusive workspace on a warm pod of the
      Runtime, driven with \`krt exec\`, \`krt cp\` and \`krt ls\` (or any client of the gateway's
      SessionService). \`--idle-timeout\` drains the session after that long without an operation;
      \`--timeout\` bounds its whole lifetime. \`--wait\` waits until it is Ready (or fails).
      End it with \`krt session close\` (drain) or \`krt cancel\` (now).
    `,
    examples: [
      [
        "Create a bash session and wait until it is Ready",
        "krt session create --runtime bash --idle-timeout 15m --wait",
      ],
    ],
  });

  runtime = Option.String("--runtime,-r", { description: "Runtime to run on (default bash)" });
  idleTimeout = Option.String("--idle-timeout", {
    description: "Drain after this long without an operation",
  });
  timeout = Option.String("--timeout", { description: "Longest lifetime of the session, e.g. 2h" });
  name = Option.String("--name", { description: "Name of the Run (default: generated)" });
  wait = Option.Boolean("--wait,-w", false, { description: "Wait until the session is Ready" });
  waitTimeout = Option.String("--wait-timeout", {
    description: "With --wait: give up after this long (exit 75; the session stays), e.g. 2m",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (this.waitTimeout !== undefined && !this.wait)
      throw CliError.usage("--wait-timeout needs --wait", "add --wait");
    const waitMs = this.waitTimeout === undefined ? undefined : parseApiDuration(this.waitTimeout);
    if (this.waitTimeout !== undefined && waitMs === undefined)
      throw CliError.usage(`--wait-timeout "${this.waitTimeout}" is not a duration`, "e.g. 30s, 2m");
    const { client, namespace } = this.connect(opts);
    const body = sessionRun({
      namespace,
      runtime: this.runtime ?? "bash",
      ...(this.name ? { name: this.name } : {}),
      ...(this.idleTimeout ? { idleTimeout: this.idleTimeout } : {}),
      ...(this.timeout ? { timeout: this.timeout } : {}),
      createdMicros: this.context.nowMicros(),
    });
    const created = await client.create<Run>(path(RunResource, namespace), body);
    const name = created.metadata.name as string;
    if (!this.wait) {
      this.print(name);
      return undefined;
    }
    // While it waits for a pod, say why (a session needs a whole, empty pod), once per reason.
    let said = "";
    const run = await waitForRun(client, namespace, name, {
      until: (r) => r.status?.phase === RunPhase.Ready,
      ...(waitMs !== undefined ? { timeoutMs: waitMs } : {}),
      onUpdate: (r) => {
        const why = r.status?.phase === RunPhase.Pending ? (r.status.waitingReason ?? "") : "";
        const line = why ? `${why}${r.status?.message ? `: ${r.status.message}` : ""}` : "";
        if (line && line !== said) this.context.stderr.write(`krt: session ${name} is Pending, ${line}\n`);
        said = line;
      },
    });
    if (run.status?.phase !== RunPhase.Ready)
      throw new CliError(
        ExitCode.RunFailed,
        `session ${name} ended ${run.status?.phase}${run.status?.reason ? ` (${run.status.reason})` : ""} before it was Ready${run.status?.message ? `: ${run.status.message}` : ""}`,
        `see \`krt describe ${name}\``,
      );
    this.print(name);
    return undefined;
  }
}

export class SessionCloseCommand extends KrtCommand {
  static override paths = [["session", "close"]];
  static override usage = Command.Usage({
    category: "Sessions",
    description: "Drain and end a session",
    details: `
      Sets \`spec.termination.mode: Drain\`: the session refuses new operations, lets the accepted
      ones finish, stops its processes, exports its artifacts and ends Succeeded. \`--wait\` waits
      for that and exits 0 when it Succeeded. \`krt cancel\` ends it now instead (Cancelled).
    `,
    examples: [["Drain a session and wait", "krt session close sess-x7k2p --wait"]],
  });

  runName = Option.String({ name: "run" });
  wait = Option.Boolean("--wait,-w", false, { description: "Wait until the session has ended" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const run = await getRun(client, namespace, this.runName);
    if (!run.spec.mode.session)
      throw CliError.usage(
        `run ${this.runName} is not a session`,
        `end it with \`krt cancel ${this.runName}\``,
      );
    if (!isTerminalPhase(run.status?.phase)) {
      await client.patch<Run>(
        path(RunResource, namespace, this.runName),
        { spec: { termination: { mode: TerminationMode.Drain } } },
        "merge",
      );
      this.context.stderr.write(`session ${this.runName} drain requested\n`);
    }
    if (!this.wait) return undefined;
    const done = await waitForRun(client, namespace, this.runName);
    const phase = done.status?.phase;
    this.print(`session ${this.runName} ${phase}${done.status?.reason ? ` (${done.status.reason})` : ""}`);
    if (phase === RunPhase.Succeeded) return ExitCode.Ok;
    return phase === RunPhase.Cancelled ? ExitCode.RunCancelled : ExitCode.RunFailed;
  }
}
