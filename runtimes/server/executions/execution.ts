/**
 * Execution is one task attempt: it prepares the working directory and files, starts the process
 * (warm or cold), streams its output to subscribers, enforces the timeout, stops the process
 * group on cancel (SIGTERM, grace, SIGKILL), and reports one TaskExited. It lives on when its
 * subscribers leave, so a restarted caller can re-attach.
 */
import { create } from "@bufbuild/protobuf";
import {
  OutputStream,
  type TaskEvent,
  TaskEventSchema,
  TaskExitReason,
  TaskState,
} from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import type { LanguageAdapter } from "../adapter.ts";
import { nowMicros } from "../clock.ts";
import type { Launcher } from "../launcher.ts";
import type { Logger } from "../logger.ts";
import { type LongTimer, longTimeout } from "../long-timer.ts";
import type { ExecutionObserver } from "../metrics.ts";
import { signalGroup } from "../process-group.ts";
import type { ByteReader, ExitStatus, RunProcess } from "../run-process.ts";
import type { ExecutionSpec } from "./execution-spec.ts";
import { exitReport } from "./exit-report.ts";
import { GroupStopper } from "./group-stopper.ts";
import { errorText, prepareExecution } from "./prepare.ts";
import { Subscription } from "./subscription.ts";
import { TailBuffer } from "./tail-buffer.ts";

export type { ExecutionSpec } from "./execution-spec.ts";

export interface ExecutionDeps {
  adapter: LanguageAdapter;
  launcher: Launcher;
  logger: Logger;
  /** Bytes a subscriber may lag behind before the Run's pipes stop being read. */
  highWaterBytes: number;
  /** Told when the execution starts and ends (metrics). */
  observer: ExecutionObserver;
  /** How long output may keep flowing after the main process exited. */
  drainMs: number;
}

export class Execution {
  state = TaskState.RUNNING;
  pid = 0;
  warm = false;
  startedAtMicros = 0;
  finishedAtMicros = 0;
  reason = TaskExitReason.UNSPECIFIED;
  readonly done: Promise<void>;
  /** performance.now() when the request was accepted. */
  private readonly acceptedAt = performance.now();

  private resolveDone!: () => void;
  private subscribers = new Set<Subscription>();
  private started: TaskEvent | undefined;
  private exited: TaskEvent | undefined;
  private readonly stdout: TailBuffer;
  private readonly stderr: TailBuffer;
  private stopper: GroupStopper | undefined;
  /** Set once the main process has exited: a Cancel after that changes nothing. */
  private processEnded = false;
  private stopReason: TaskExitReason | undefined;
  private stopMessage = "";
  private timeoutTimer: LongTimer | undefined;

  constructor(
    readonly spec: ExecutionSpec,
    private readonly deps: ExecutionDeps,
  ) {
    this.stdout = new TailBuffer(spec.tailBytes);
    this.stderr = new TailBuffer(spec.tailBytes);
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  get finished(): boolean {
    return this.exited !== undefined;
  }

  /**
   * A new subscriber: it gets TaskStarted (when started), optionally the retained tails, then
   * live events; for a finished execution TaskStarted (when it ever started) and TaskExited.
   */
  subscribe(replayTails: boolean): Subscription {
    const sub = new Subscription((s) => this.subscribers.delete(s), this.deps.highWaterBytes);
    if (this.started !== undefined) sub.push(this.started);
    if (this.exited !== undefined) {
      sub.push(this.exited);
      sub.end();
      return sub;
    }
    if (replayTails) {
      for (const [stream, tail] of [
        [OutputStream.STDOUT, this.stdout],
        [OutputStream.STDERR, this.stderr],
      ] as const) {
        const { data, offset } = tail.raw();
        if (data.length > 0) sub.push(outputEvent(stream, data, offset));
      }
    }
    this.subscribers.add(sub);
    return sub;
  }

  start(): void {
    this.run().catch((error: unknown) => {
      this.deps.logger.error({ err: error, runUid: this.spec.runUid }, "execution failed");
      this.finish(TaskExitReason.INTERNAL, `runtime server error: ${String(error)}`, null);
    });
  }

  /** Cancel: SIGTERM now (SIGKILL when graceMs is 0), SIGKILL when the grace is over. */
  cancel(graceMs: number, message: string): TaskState {
    this.stop(TaskExitReason.CANCELLED, message, graceMs);
    return this.state;
  }

  private stop(reason: TaskExitReason, message: string, graceMs: number): void {
    if (this.exited !== undefined || this.processEnded) return;
    if (this.stopReason === undefined) {
      this.stopReason = reason;
      this.stopMessage = message;
    }
    if (this.stopper === undefined) return; // not started yet: run() sees stopReason and starts nothing
    this.state = TaskState.STOPPING;
    this.stopper.stop(graceMs);
  }

  private async run(): Promise<void> {
    const { spec, deps } = this;
    const plan = prepareExecution(spec, deps.adapter);
    if (typeof plan === "string") return this.finish(TaskExitReason.START_FAILED, plan, null);
    if (this.stopReason !== undefined) return this.finish(this.stopReason, this.stopMessage, null);
    let proc: RunProcess;
    try {
      proc = deps.launcher.launch({ plan, cwd: spec.cwd, env: spec.env, stateDir: spec.stateDir });
    } catch (error) {
      return this.finish(
        TaskExitReason.START_FAILED,
        `cannot start the interpreter: ${errorText(error)}`,
        null,
      );
    }
    this.stopper = new GroupStopper(proc.pid);
    this.pid = proc.pid;
    this.warm = proc.warm;
    this.startedAtMicros = nowMicros();
    deps.observer.started(proc.warm, performance.now() - this.acceptedAt);
    this.started = create(TaskEventSchema, {
      event: {
        case: "started",
        value: {
          runUid: spec.runUid,
          attempt: spec.attempt,
          pid: proc.pid,
          startedAtMicros: BigInt(this.startedAtMicros),
          warm: proc.warm,
          workingDir: spec.cwd,
        },
      },
    });
    this.broadcast(this.started);
    deps.logger.debug(
      { runUid: spec.runUid, attempt: spec.attempt, runPid: proc.pid, warm: proc.warm },
      "started",
    );
    if (spec.timeoutMs > 0) {
      this.timeoutTimer = longTimeout(
        () => this.stop(TaskExitReason.TIMEOUT, `timed out after ${spec.timeoutMs} ms`, spec.graceMs),
        spec.timeoutMs,
      );
    }
    const pumps = Promise.all([
      this.pump(proc.stdout, OutputStream.STDOUT, this.stdout, proc.stdoutHead),
      this.pump(proc.stderr, OutputStream.STDERR, this.stderr, undefined),
    ]);
    const status = await proc.exited;
    this.finishedAtMicros = nowMicros();
    this.processEnded = true;
    const reason = this.stopReason ?? TaskExitReason.COMPLETED;
    this.timeoutTimer?.cancel();
    this.stopper.clear();
    // The Run is over when its main process is: whatever is left of its group goes too.
    signalGroup(proc.pid, "SIGKILL");
    let drainTimer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      pumps.then(() => true),
      new Promise<false>((resolve) => {
        drainTimer = setTimeout(() => resolve(false), deps.drainMs);
      }),
    ]);
    clearTimeout(drainTimer);
    if (!drained) {
      // Something outside the group still holds the pipes open; stop reading them.
      await Promise.allSettled([proc.stdout.cancel(), proc.stderr.cancel()]);
      await pumps;
    }
    this.finish(reason, this.stopMessage, status);
  }

  private async pump(
    reader: ByteReader,
    stream: OutputStream,
    tail: TailBuffer,
    head: Promise<Uint8Array> | undefined,
  ): Promise<void> {
    try {
      if (head !== undefined) {
        const first = await head;
        if (first.length > 0) await this.output(stream, tail, first);
      }
      for (;;) {
        const { done, value } = await reader.read();
        if (done || value === undefined) return;
        await this.output(stream, tail, value);
      }
    } catch {
      // cancelled after the drain deadline, or the pipe failed: the stream ends here
    }
  }

  private async output(stream: OutputStream, tail: TailBuffer, data: Uint8Array): Promise<void> {
    const offset = tail.total;
    tail.push(data);
    this.broadcast(outputEvent(stream, data, offset));
    for (const sub of this.subscribers) {
      if (sub.buffered >= this.deps.highWaterBytes) await sub.whenBelow();
    }
  }

  private finish(reason: TaskExitReason, text: string, status: ExitStatus | null): void {
    if (this.exited !== undefined) return;
    const { spec } = this;
    if (this.finishedAtMicros === 0) this.finishedAtMicros = nowMicros();
    const report = exitReport(spec, {
      reason,
      message: text,
      status,
      stdout: this.stdout,
      stderr: this.stderr,
      startedAtMicros: this.startedAtMicros,
      finishedAtMicros: this.finishedAtMicros,
    });
    const finalReason = report.reason;
    const finalMessage = report.message;
    this.reason = finalReason;
    this.state = TaskState.EXITED;
    this.exited = report.event;
    this.broadcast(this.exited);
    for (const sub of this.subscribers) sub.end();
    this.subscribers.clear();
    this.deps.logger.info(
      {
        runUid: spec.runUid,
        attempt: spec.attempt,
        runPid: this.pid,
        warm: this.warm,
        reason: TaskExitReason[finalReason],
        exitCode: status?.exitCode,
        signal: status?.signal || undefined,
        durationUs: this.startedAtMicros === 0 ? 0 : this.finishedAtMicros - this.startedAtMicros,
        message: finalMessage || undefined,
      },
      "exited",
    );
    this.deps.observer.finished(
      finalReason,
      this.startedAtMicros === 0 ? 0 : (this.finishedAtMicros - this.startedAtMicros) / 1000,
    );
    this.resolveDone();
  }

  private broadcast(event: TaskEvent): void {
    for (const sub of this.subscribers) sub.push(event);
  }
}

function outputEvent(stream: OutputStream, data: Uint8Array, offset: number): TaskEvent {
  return create(TaskEventSchema, {
    event: { case: "output", value: { stream, data, offset: BigInt(offset) } },
  });
}
