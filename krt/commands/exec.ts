/** `krt exec <run> -- cmd args…`: run a command in a session through the gateway, streaming its output. */

import { constants } from "node:os";
import { parseApiDuration } from "@kruntimes/api";
import { ExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { Command, Option } from "clipanion";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { execStream } from "../gateway/session-client.ts";
import { sessionError } from "../gateway/session-errors.ts";
import type { GlobalOptions } from "../options.ts";
import { GatewayCommand } from "./gateway-command.ts";

/** Exit codes of commands that did not exit by themselves (as shells report them). */
export const EXEC_EXIT = { timeout: 124, startFailed: 127, cancelled: 130 } as const;

export class ExecCommand extends GatewayCommand {
  static override paths = [["exec"]];
  static override usage = Command.Usage({
    category: "Sessions",
    description: "Run a command in a session",
    details: `
      Runs one command in a Ready session Run through the gateway
      (\`kruntimes.gateway.v1.SessionService/Exec\`) and streams its stdout and stderr to krt's as
      they are produced. krt exits with the command's exit code; a command killed by a signal
      exits 128+n, one that hit its timeout 124, one that could not start 127, a cancelled one 130.

      The command is the words after \`--\` (run directly, looked up in PATH), or \`--shell 'line'\`
      (run by the runtime's shell). Its working directory is \`--workdir\` (relative to the
      session's workspace; default the workspace), \`-e K=V\` adds environment variables,
      \`--stdin\` sends krt's stdin to it. \`--timeout\` is the operation timeout (queue wait
      included; default the Run's defaultOperationTimeout, at most its maxOperationTimeout).

      Commands and file changes of one session run one at a time in arrival order. The caller needs
      \`create\` on the \`runs/session\` subresource of the Run; gateway flags as for \`krt invoke\`.
    `,
    examples: [
      ["Run a command", "krt exec sess-x7k2p -- ls -la"],
      [
        "A shell line in a subdirectory",
        "krt exec sess-x7k2p --workdir src --shell 'make && ./app > out.txt'",
      ],
      ["Pipe input in", "cat data.csv | krt exec sess-x7k2p --stdin -- wc -l"],
    ],
  });

  runName = Option.String({ name: "run" });
  workdir = Option.String("--workdir,-w", { description: "Working directory, relative to the workspace" });
  env = Option.Array("-e,--env", [], { description: "Environment variable K=V (repeatable)" });
  timeout = Option.String("--timeout", { description: "Operation timeout, e.g. 30s (default: the Run's)" });
  shell = Option.String("--shell", { description: "A shell command line instead of the words after --" });
  stdin = Option.Boolean("--stdin,-i", false, { description: "Send krt's stdin to the command" });
  args = Option.Rest({ name: "command" });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    const argv = this.args[0] === "--" ? this.args.slice(1) : this.args;
    if (this.shell !== undefined && argv.length > 0)
      throw CliError.usage("--shell and a command after -- exclude each other", "use one of them");
    if (this.shell === undefined && argv.length === 0)
      throw CliError.usage("nothing to run", "e.g. krt exec <run> -- ls -la, or --shell 'echo $HOME'");
    const env: Record<string, string> = {};
    for (const e of this.env) {
      const at = e.indexOf("=");
      if (at < 1) throw CliError.usage(`-e "${e}" is not K=V`);
      env[e.slice(0, at)] = e.slice(at + 1);
    }
    const timeoutMs = this.timeout === undefined ? 0 : parseApiDuration(this.timeout);
    if (timeoutMs === undefined)
      throw CliError.usage(`--timeout "${this.timeout}" is not a duration`, "e.g. 30s");
    const stdin = this.stdin
      ? new Uint8Array(await new Response(Bun.stdin.stream()).arrayBuffer())
      : undefined;
    const gw = await this.openGateway(opts);
    const t = { namespace: gw.namespace, run: this.runName, token: gw.token };
    try {
      const last = await execStream(
        gw.client,
        t,
        {
          ...(this.shell !== undefined ? { shell: this.shell } : { argv }),
          env,
          workingDir: this.workdir ?? "",
          timeoutMs,
          ...(stdin ? { stdin } : {}),
        },
        async (ev) => {
          if (ev.event.case !== "output") return;
          const out = ev.event.value.stream === "stderr" ? this.context.stderr : this.context.stdout;
          if (!out.write(ev.event.value.data))
            await new Promise<void>((resolve) => out.once("drain", () => resolve()));
        },
      );
      if (last?.event.case !== "exited")
        throw new CliError(ExitCode.Internal, "the command's output ended without its exit");
      const x = last.event.value;
      switch (x.reason) {
        case ExitReason.EXITED:
          if (x.signal) return 128 + (constants.signals[x.signal as keyof typeof constants.signals] ?? 0);
          return x.exitCode;
        case ExitReason.TIMEOUT:
          this.context.stderr.write(
            `krt exec: the command hit its timeout${x.message ? `: ${x.message}` : ""}\n`,
          );
          return EXEC_EXIT.timeout;
        case ExitReason.CANCELLED:
          this.context.stderr.write(
            `krt exec: the command was cancelled${x.message ? `: ${x.message}` : ""}\n`,
          );
          return EXEC_EXIT.cancelled;
        case ExitReason.START_FAILED:
          this.context.stderr.write(`krt exec: the command could not start: ${x.message}\n`);
          return EXEC_EXIT.startFailed;
      }
      return x.exitCode;
    } catch (e) {
      throw sessionError(e, { namespace: gw.namespace, run: this.runName, via: gw.target.via });
    } finally {
      gw.target.close();
    }
  }
}
