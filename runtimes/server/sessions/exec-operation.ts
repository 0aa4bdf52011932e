/**
 * ExecOperation is one Exec: it starts the command in its own process group, feeds stdin,
 * streams stdout and stderr chunks as they are read, enforces the timeout, stops the group on
 * cancel (SIGTERM, SIGKILL after the grace), and ends with exactly one ExecExited. When the main
 * process exits, whatever is left of its group is killed (like a task), and output still in the
 * pipes is read for at most PIPE_DRAIN_MS.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ExecResponse,
  ExecResponseSchema,
  ExitReason,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { nowMicros } from "../clock.ts";
import { GroupStopper } from "../executions/group-stopper.ts";
import { type LongTimer, longTimeout } from "../long-timer.ts";
import { signalGroup } from "../process-group.ts";
import type { ByteReader } from "../run-process.ts";
import { EventQueue } from "./event-queue.ts";
import {
  type CommandProcess,
  type ExitFacts,
  feedStdin,
  type SpawnSpec,
  spawnCommand,
  waitExit,
} from "./spawn-command.ts";

const PIPE_DRAIN_MS = 500;
/** Bytes a stream consumer may lag before the command's pipes stop being read. */
const HIGH_WATER_BYTES = 1024 * 1024;

export interface ExecSpec extends SpawnSpec {
  operationId: string;
  timeoutMs: number;
  graceMs: number;
}

export interface ExecResult {
  reason: ExitReason;
  exitCode: number;
  signal: string;
  durationMs: number;
}

export class ExecOperation {
  readonly events = new EventQueue<ExecResponse>(HIGH_WATER_BYTES, (e) =>
    e.event.case === "output" ? e.event.value.data.length : 64,
  );
  pid = 0;
  readonly done: Promise<ExecResult>;
  private resolveDone!: (result: ExecResult) => void;
  private stopper: GroupStopper | undefined;
  private stopReason: ExitReason | undefined;
  private stopMessage = "";
  private ended = false;
  private timer: LongTimer | undefined;

  constructor(readonly spec: ExecSpec) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  get running(): boolean {
    return !this.ended;
  }

  start(): void {
    this.run().catch((error: unknown) =>
      this.finish(ExitReason.START_FAILED, `runtime server error: ${String(error)}`, null, 0),
    );
  }

  /** Cancel (CancelOperation, a departed caller, Close): SIGTERM now, SIGKILL after `graceMs`. */
  stop(reason: ExitReason, message: string, graceMs: number): boolean {
    if (this.ended) return false;
    if (this.stopReason === undefined) {
      this.stopReason = reason;
      this.stopMessage = message;
    }
    this.stopper?.stop(graceMs);
    return true;
  }

  private async run(): Promise<void> {
    const { spec } = this;
    if (this.stopReason !== undefined) return this.finish(this.stopReason, this.stopMessage, null, 0);
    const proc = spawnCommand(spec);
    if ("error" in proc) return this.finish(ExitReason.START_FAILED, proc.error, null, 0);
    const startedAt = performance.now();
    this.pid = proc.pid;
    this.stopper = new GroupStopper(proc.pid);
    this.events.push(
      create(ExecResponseSchema, {
        event: { case: "started", value: { pid: proc.pid, startedMicros: BigInt(nowMicros()) } },
      }),
    );
    if (this.stopReason !== undefined) this.stopper.stop(0);
    if (spec.timeoutMs > 0) {
      this.timer = longTimeout(
        () => this.stop(ExitReason.TIMEOUT, `timed out after ${spec.timeoutMs} ms`, spec.graceMs),
        spec.timeoutMs,
      );
    }
    if (spec.stdin !== undefined && spec.stdin.length > 0) void feedStdin(proc, spec.stdin);
    const stdout = proc.stdout.getReader() as ByteReader;
    const stderr = proc.stderr.getReader() as ByteReader;
    const pumps = Promise.all([this.pump(stdout, "stdout"), this.pump(stderr, "stderr")]);
    const status = await waitExit(proc as CommandProcess);
    this.timer?.cancel();
    this.stopper.clear();
    signalGroup(proc.pid, "SIGKILL");
    let drainTimer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      pumps.then(() => true),
      new Promise<false>((resolve) => {
        drainTimer = setTimeout(() => resolve(false), PIPE_DRAIN_MS);
      }),
    ]);
    clearTimeout(drainTimer);
    if (!drained) {
      await Promise.allSettled([stdout.cancel(), stderr.cancel()]);
      await pumps;
    }
    this.finish(
      this.stopReason ?? ExitReason.EXITED,
      this.stopMessage,
      status,
      performance.now() - startedAt,
    );
  }

  private async pump(reader: ByteReader, stream: "stdout" | "stderr"): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || value === undefined) return;
        if (value.length === 0) continue;
        this.events.push(
          create(ExecResponseSchema, { event: { case: "output", value: { stream, data: value } } }),
        );
        await this.events.whenBelow();
      }
    } catch {
      // cancelled after the drain deadline, or the pipe failed: the stream ends here
    }
  }

  private finish(reason: ExitReason, message: string, status: ExitFacts | null, durationMs: number): void {
    if (this.ended) return;
    this.ended = true;
    this.events.push(
      create(ExecResponseSchema, {
        event: {
          case: "exited",
          value: {
            reason,
            exitCode: status?.exitCode ?? 0,
            signal: status?.signal ?? "",
            message,
            finishedMicros: BigInt(nowMicros()),
          },
        },
      }),
    );
    this.events.end();
    this.resolveDone({ reason, exitCode: status?.exitCode ?? 0, signal: status?.signal ?? "", durationMs });
  }
}
