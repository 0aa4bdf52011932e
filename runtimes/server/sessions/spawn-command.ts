/**
 * Starts a session command: an argv (argv[0] looked up in the PATH of the command's environment)
 * or a shell line (`<shell> -c <line>`), in its own process group (setsid: pgid = pid), in a
 * working directory already checked to be inside the workspace. A failure to start is a message
 * for EXIT_REASON_START_FAILED, not an RPC error.
 */

import { Code } from "@connectrpc/connect";
import type { Subprocess } from "bun";
import type { Command } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { signalName } from "../process-group.ts";
import { sessionError } from "./session-error.ts";

export type CommandProcess = Subprocess<"pipe" | "ignore", "pipe", "pipe">;

/** The argv a Command runs; INVALID_ARGUMENT when it names nothing. */
export function commandArgv(command: Command | undefined, shell: string): string[] {
  const program = command?.program;
  if (program?.case === "argv") {
    if (program.value.args.length === 0 || program.value.args[0] === "") {
      throw sessionError(Code.InvalidArgument, "command.argv needs at least the program");
    }
    if (program.value.args.some((arg) => arg.includes("\0"))) {
      throw sessionError(Code.InvalidArgument, "command.argv must not contain NUL bytes");
    }
    return [...program.value.args];
  }
  if (program?.case === "shell") {
    if (program.value.trim() === "") throw sessionError(Code.InvalidArgument, "command.shell is empty");
    if (program.value.includes("\0"))
      throw sessionError(Code.InvalidArgument, "command.shell must not contain NUL bytes");
    return [shell, "-c", program.value];
  }
  throw sessionError(Code.InvalidArgument, "command needs argv or shell");
}

export interface SpawnSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Bytes for stdin (then closed); undefined or empty = /dev/null. */
  stdin?: Uint8Array | undefined;
  /** Set when the command cannot start before spawning (a bad working directory): START_FAILED. */
  startError?: string | undefined;
}

export function spawnCommand(spec: SpawnSpec): CommandProcess | { error: string } {
  if (spec.startError !== undefined) return { error: spec.startError };
  const withStdin = spec.stdin !== undefined && spec.stdin.length > 0;
  try {
    return Bun.spawn({
      cmd: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      stdio: [withStdin ? "pipe" : "ignore", "pipe", "pipe"],
      detached: true,
    }) as CommandProcess;
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return { error: `cannot start ${JSON.stringify(spec.argv[0])}: ${text}` };
  }
}

/** Writes the stdin bytes and closes stdin; a command that does not read them is not an error. */
export async function feedStdin(proc: CommandProcess, data: Uint8Array): Promise<void> {
  const sink = proc.stdin as unknown as
    | { write(d: Uint8Array): number; end(): unknown; flush(): unknown }
    | undefined;
  if (sink === undefined) return;
  try {
    sink.write(data);
    await sink.flush();
    await sink.end();
  } catch {
    // EPIPE: the command exited or closed its stdin
  }
}

export interface ExitFacts {
  exitCode: number;
  signal: string;
}

export async function waitExit(proc: CommandProcess): Promise<ExitFacts> {
  await proc.exited;
  if (proc.signalCode !== null) return { exitCode: 0, signal: signalName(proc.signalCode) };
  return { exitCode: proc.exitCode ?? 0, signal: "" };
}
