/**
 * `krt mcp`: kruntimes as an MCP (Model Context Protocol) server, so any MCP client (an agent, a
 * desktop assistant, an IDE) can create sessions, run commands and tasks, move files and call
 * functions — with the credentials of the user who starts it. stdio by default (stdout carries
 * the protocol, every log line goes to stderr); `--http` serves Streamable HTTP instead.
 */
import { isDuration, parseApiDuration } from "@kruntimes/api";
import { Command, Option } from "clipanion";
import { buildInfo } from "../build-info.ts";
import { CliError, unreadable } from "../errors.ts";
import { DEFAULT_LIMITS, type McpLimits } from "../mcp/limits.ts";
import { checkHttpOptions, parseListen } from "../mcp/listen.ts";
import type { GlobalOptions } from "../options.ts";
import { parseByteSize } from "../runs/function-flags.ts";
import { GatewayCommand } from "./gateway-command.ts";

const MiB = 1024 * 1024;

export class McpCommand extends GatewayCommand {
  static override paths = [["mcp"]];
  static override usage = Command.Usage({
    category: "Agents",
    description: "Serve kruntimes to MCP clients (agents) over stdio or HTTP",
    details: `
      Runs a Model Context Protocol server with the tools create_session, exec, read_file,
      write_file, list_files, close_session, run_task and invoke_function, acting in one namespace
      (\`-n\`, default the context's) with your kubeconfig's credentials: Runs are created and
      watched as your user, session and function calls carry your user's bearer token to the
      gateway (found as for \`krt invoke\`, with the same flags). Whatever a client asks for is
      done as you: give it a context whose user has only the rights the agent should have.

      By default it speaks MCP on stdin/stdout (add it to a client as the command \`krt\` with the
      arguments \`mcp …\`); logs go to stderr. \`--http HOST:PORT\` serves Streamable HTTP at
      \`/mcp\` instead: loopback only unless \`--allow-remote\`, which also needs a bearer token
      (\`--http-token-file\`; clients send \`Authorization: Bearer <token>\`) and should have TLS
      (\`--tls-cert\`, \`--tls-key\`).

      Results are bounded for a model's context: \`--max-output\` bytes of each of a command's
      stdout and stderr (its start and end are kept), of a task's tails and of a function's
      response; \`--max-read\` bytes per read_file call (the rest with an offset); \`--max-write\`
      bytes per write_file call. Sessions get \`--session-idle-timeout\` unless the call sets one,
      and tasks are deleted \`--task-ttl\` after they end.
    `,
    examples: [
      ["Serve on stdio (what an MCP client starts)", "krt mcp -n agents --context agent-sandbox"],
      ["Serve Streamable HTTP on loopback", "krt mcp --http 127.0.0.1:8765"],
      [
        "Serve other hosts, with a token and TLS",
        "krt mcp --http 0.0.0.0:8765 --allow-remote --http-token-file token --tls-cert tls.crt --tls-key tls.key",
      ],
    ],
  });

  http = Option.String("--http", {
    description: "Serve Streamable HTTP on HOST:PORT (at /mcp) instead of stdio",
  });
  httpTokenFile = Option.String("--http-token-file", {
    description: "File holding the bearer token HTTP clients must send (required with --allow-remote)",
  });
  allowRemote = Option.Boolean("--allow-remote", false, {
    description: "Allow --http on a non-loopback address (needs --http-token-file)",
  });
  tlsCert = Option.String("--tls-cert", { description: "With --http: PEM certificate to serve HTTPS with" });
  tlsKey = Option.String("--tls-key", { description: "With --http: PEM key of --tls-cert" });
  maxOutput = Option.String("--max-output", {
    description: "Bytes kept of each command output stream, task tail and function response (default 32Ki)",
  });
  maxRead = Option.String("--max-read", {
    description: "Bytes one read_file call returns at most (default 128Ki)",
  });
  maxWrite = Option.String("--max-write", {
    description: "Bytes one write_file call (or exec's stdin) may carry (default 4Mi, at most 64Mi)",
  });
  sessionIdleTimeout = Option.String("--session-idle-timeout", {
    description: "Idle timeout of sessions created without one, e.g. 30m; 0 for none (default 15m)",
  });
  taskTtl = Option.String("--task-ttl", {
    description: "Delete task Runs this long after they end, e.g. 1h; 0 keeps them (default 1h)",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (this.output !== undefined)
      throw CliError.usage("-o does not apply to krt mcp", "tool results are the MCP client's to show");
    this.via();
    if (this.http === undefined) {
      const httpOnly = [
        ["--http-token-file", this.httpTokenFile],
        ["--allow-remote", this.allowRemote || undefined],
        ["--tls-cert", this.tlsCert],
        ["--tls-key", this.tlsKey],
      ].filter(([, v]) => v !== undefined);
      if (httpOnly.length)
        throw CliError.usage(
          `${httpOnly.map(([f]) => f).join(", ")} apply to --http only`,
          "add --http 127.0.0.1:PORT, or drop them for stdio",
        );
    }
    const limits = this.limits();
    const http = this.http !== undefined ? await this.httpOptions(this.http) : undefined;
    const { client, namespace } = this.connect(opts);
    // Loaded only now: other krt commands start without the MCP SDK and zod.
    const { serveMcp } = await import("../mcp/serve.ts");
    await serveMcp({
      backend: {
        kube: client,
        namespace,
        openGateway: () => this.openGateway(opts),
        limits,
        nowMicros: () => this.context.nowMicros(),
      },
      ...(http ? { http } : {}),
      stdin: this.context.stdin,
      stdout: this.context.stdout,
      version: buildInfo.version,
      log: (line) => {
        this.context.stderr.write(`krt mcp: ${line}\n`);
      },
    });
    return undefined;
  }

  private limits(): McpLimits {
    const size = (flag: string, text: string | undefined, fallback: number, max: number) => {
      if (text === undefined) return fallback;
      const n = parseByteSize(text);
      if (n === undefined || n < 1 || n > max)
        throw CliError.usage(
          `${flag} "${text}" must be a byte size from 1 to ${max / MiB}Mi, e.g. 65536, 64Ki, 1Mi`,
        );
      return n;
    };
    const seconds = (flag: string, text: string | undefined, fallback: number) => {
      if (text === undefined) return fallback;
      if (text === "0") return 0;
      const ms = isDuration(text) ? parseApiDuration(text) : undefined;
      if (ms === undefined || ms < 1000)
        throw CliError.usage(
          `${flag} "${text}" is not a duration of a second or more`,
          "e.g. 30m, 1h; 0 for none",
        );
      return Math.round(ms / 1000);
    };
    return {
      maxOutputBytes: size("--max-output", this.maxOutput, DEFAULT_LIMITS.maxOutputBytes, 16 * MiB),
      maxReadBytes: size("--max-read", this.maxRead, DEFAULT_LIMITS.maxReadBytes, 16 * MiB),
      maxWriteBytes: size("--max-write", this.maxWrite, DEFAULT_LIMITS.maxWriteBytes, 64 * MiB),
      sessionIdleTimeoutSeconds: seconds(
        "--session-idle-timeout",
        this.sessionIdleTimeout,
        DEFAULT_LIMITS.sessionIdleTimeoutSeconds,
      ),
      taskTtlSeconds: seconds("--task-ttl", this.taskTtl, DEFAULT_LIMITS.taskTtlSeconds),
    };
  }

  private async httpOptions(listen: string) {
    const { host, port } = parseListen(listen);
    if ((this.tlsCert === undefined) !== (this.tlsKey === undefined))
      throw CliError.usage("--tls-cert and --tls-key go together", "pass both, or neither");
    const token =
      this.httpTokenFile !== undefined
        ? (await this.readFlagFile("--http-token-file", this.httpTokenFile)).trim()
        : undefined;
    if (this.httpTokenFile !== undefined && !token)
      throw CliError.usage(`--http-token-file ${this.httpTokenFile} is empty`);
    const tls =
      this.tlsCert !== undefined && this.tlsKey !== undefined
        ? {
            cert: await this.readFlagFile("--tls-cert", this.tlsCert),
            key: await this.readFlagFile("--tls-key", this.tlsKey),
          }
        : undefined;
    const { warnings } = checkHttpOptions({
      host,
      allowRemote: this.allowRemote,
      tls: tls !== undefined,
      ...(token ? { token } : {}),
    });
    for (const w of warnings) this.context.stderr.write(`krt mcp: warning: ${w}\n`);
    const limits = this.limits();
    return {
      host,
      port,
      allowRemote: this.allowRemote,
      ...(token ? { token } : {}),
      ...(tls ? { tls } : {}),
      // A write_file's content arrives as JSON text (base64 grows it by a third).
      maxBodyBytes: Math.ceil((limits.maxWriteBytes * 4) / 3) + MiB,
    };
  }

  private async readFlagFile(flag: string, file: string): Promise<string> {
    try {
      return await Bun.file(file).text();
    } catch (e) {
      throw unreadable(flag, file, e);
    }
  }
}
