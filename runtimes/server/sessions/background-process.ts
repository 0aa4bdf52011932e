/**
 * BackgroundProcess is a StartProcess: a command in its own process group whose output is kept
 * only as bounded tails (its pipes are always read, so it never blocks on a full pipe). It runs
 * until it exits, is signalled, or the session closes. A start failure is a process that ended
 * with START_FAILED, its message in stderr_tail.
 */
import { create } from "@bufbuild/protobuf";
import {
  ExitReason,
  type ProcessInfo,
  ProcessInfoSchema,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { nowMicros } from "../clock.ts";
import { TailBuffer } from "../executions/tail-buffer.ts";
import { signalGroup } from "../process-group.ts";
import type { ByteReader } from "../run-process.ts";
import { type SpawnSpec, spawnCommand, waitExit } from "./spawn-command.ts";

export class BackgroundProcess {
  pid = 0;
  running = false;
  reason = ExitReason.UNSPECIFIED;
  exitCode = 0;
  signal = "";
  startedMicros = 0;
  finishedMicros = 0;
  readonly exited: Promise<void>;
  private resolveExited!: () => void;
  private readonly stdout: TailBuffer;
  private readonly stderr: TailBuffer;
  /** Set when the session closes: the exit reads CANCELLED. */
  private cancelled = false;

  constructor(
    readonly id: string,
    spec: SpawnSpec,
    tailBytes: number,
  ) {
    this.stdout = new TailBuffer(tailBytes);
    this.stderr = new TailBuffer(tailBytes);
    this.exited = new Promise((resolve) => {
      this.resolveExited = resolve;
    });
    this.startedMicros = nowMicros();
    const proc = spawnCommand({ ...spec, stdin: undefined });
    if ("error" in proc) {
      this.reason = ExitReason.START_FAILED;
      this.stderr.push(new TextEncoder().encode(proc.error));
      this.finishedMicros = this.startedMicros;
      this.resolveExited();
      return;
    }
    this.pid = proc.pid;
    this.running = true;
    const pumps = Promise.all([
      pump(proc.stdout.getReader() as ByteReader, this.stdout),
      pump(proc.stderr.getReader() as ByteReader, this.stderr),
    ]);
    void waitExit(proc).then(async (status) => {
      signalGroup(proc.pid, "SIGKILL");
      await Promise.race([pumps, Bun.sleep(500)]);
      this.running = false;
      this.exitCode = status.exitCode;
      this.signal = status.signal;
      this.reason = this.cancelled ? ExitReason.CANCELLED : ExitReason.EXITED;
      this.finishedMicros = nowMicros();
      this.resolveExited();
    });
  }

  /** Sends `signal` to the process's group; false when it no longer runs. */
  kill(signal: NodeJS.Signals): boolean {
    if (!this.running) return false;
    return signalGroup(this.pid, signal);
  }

  /** The session closes: its exit is reported as CANCELLED. */
  markCancelled(): void {
    if (this.running) this.cancelled = true;
  }

  toProto(): ProcessInfo {
    return create(ProcessInfoSchema, {
      processId: this.id,
      pid: this.pid,
      running: this.running,
      reason: this.reason,
      exitCode: this.exitCode,
      signal: this.signal,
      stdoutTail: this.stdout.raw().data,
      stderrTail: this.stderr.raw().data,
      startedMicros: BigInt(this.startedMicros),
      finishedMicros: BigInt(this.finishedMicros),
    });
  }
}

async function pump(reader: ByteReader, tail: TailBuffer): Promise<void> {
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || value === undefined) return;
      tail.push(value);
    }
  } catch {
    // the pipe failed: the tail ends here
  }
}
