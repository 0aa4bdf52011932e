/**
 * RunProcess is a started Run's main process, whether it was cold-spawned or handed to a warm
 * interpreter: its pid (= process group id), its output pipes and its exit.
 */
import type { Subprocess } from "bun";
import { signalName } from "./process-group.ts";

export interface ExitStatus {
  /** Set when the process exited normally. */
  exitCode: number | null;
  /** Signal name when a signal ended it, else "". */
  signal: string;
}

/** What the server needs of a piped stdout/stderr reader (Bun's and the DOM's types differ). */
export interface ByteReader {
  read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
  cancel(reason?: unknown): Promise<void>;
}

export interface RunProcess {
  readonly pid: number;
  readonly warm: boolean;
  readonly stdout: ByteReader;
  readonly stderr: ByteReader;
  /** Bytes the process wrote to stdout before `stdout` (only a warm process can have some). */
  readonly stdoutHead: Promise<Uint8Array>;
  readonly exited: Promise<ExitStatus>;
}

export type PipedSubprocess = Subprocess<"pipe" | "ignore", "pipe", "pipe">;

export async function exitStatus(proc: PipedSubprocess): Promise<ExitStatus> {
  await proc.exited;
  if (proc.signalCode !== null) return { exitCode: null, signal: signalName(proc.signalCode) };
  return { exitCode: proc.exitCode, signal: "" };
}
