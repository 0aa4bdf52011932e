/**
 * Execution is one task attempt: it prepares the working directory and files, starts the process
 * (warm or cold), streams its output to subscribers, enforces the timeout, stops the process
 * group on cancel (SIGTERM, grace, SIGKILL), and reports one TaskExited. It lives on when its
 * subscribers leave, so a restarted caller can re-attach.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import {
  OutputStream,
  type TaskEvent,
  TaskEventSchema,
  TaskExitReason,
  TaskState,
} from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import type { LanguageAdapter, Program, ProgramPlan } from "../adapter.ts";
import { nowMicros } from "../clock.ts";
import type { Launcher } from "../launcher.ts";
import type { Logger } from "../logger.ts";
import type { ExecutionObserver } from "../metrics.ts";
import { signalGroup } from "../process-group.ts";
import type { ByteReader, ExitStatus, RunProcess } from "../run-process.ts";
import { type OutputLimits, type OutputsResult, parseOutputs } from "./outputs-file.ts";
import { Subscription } from "./subscription.ts";
import { TailBuffer } from "./tail-buffer.ts";

/** A validated ExecuteRequest, with every default applied and every path resolved. */
export interface ExecutionSpec {
  runUid: string;
  runName: string;
  attempt: number;
  /** What to run; null together with a startError. */
  program: Program | null;
  /** Set when the request cannot start (a START_FAILED exit, not a call error). */
  startError: string;
  env: Record<string, string>;
  timeoutMs: number;
  graceMs: number;
  tailBytes: number;
  outputLimits: OutputLimits;
  cwd: string;
  /** True when cwd is the default <root>/<uid>/<attempt> (and so is the server's to remove). */
  defaultCwd: boolean;
  stateDir: string;
  outputsPath: string;
}

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
  private proc: RunProcess | undefined;
  private stopReason: TaskExitReason | undefined;
  private stopMessage = "";
  private termSent = false;
  private killAt = Number.POSITIVE_INFINITY;
  private killTimer: ReturnType<typeof setTimeout> | undefined;
  private timeoutTimer: ReturnType<typeof setTimeout> | undefined;

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
    if (this.exited !== undefined) return;
    if (this.stopReason === undefined) {
      this.stopReason = reason;
      this.stopMessage = message;
    }
    const proc = this.proc;
    if (proc === undefined) return; // not started yet: run() sees stopReason and starts nothing
    this.state = TaskState.STOPPING;
    if (graceMs <= 0) {
      this.killAt = 0;
      clearTimeout(this.killTimer);
      signalGroup(proc.pid, "SIGKILL");
      return;
    }
    if (!this.termSent) {
      this.termSent = true;
      signalGroup(proc.pid, "SIGTERM");
    }
    const at = Date.now() + graceMs;
    if (at < this.killAt) {
      this.killAt = at;
      clearTimeout(this.killTimer);
      this.killTimer = setTimeout(() => signalGroup(proc.pid, "SIGKILL"), graceMs);
    }
  }

  private async run(): Promise<void> {
    const { spec, deps } = this;
    const plan = this.prepare();
    if (typeof plan === "string") return this.finish(TaskExitReason.START_FAILED, plan, null);
    if (this.stopReason !== undefined) return this.finish(this.stopReason, this.stopMessage, null);
    let proc: RunProcess;
    try {
      proc = deps.launcher.launch({ plan, cwd: spec.cwd, env: spec.env, stateDir: spec.stateDir });
    } catch (error) {
      return this.finish(
        TaskExitReason.START_FAILED,
        `cannot start the interpreter: ${message(error)}`,
        null,
      );
    }
    this.proc = proc;
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
      this.timeoutTimer = setTimeout(
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
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.killTimer);
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
    this.finish(this.stopReason ?? TaskExitReason.COMPLETED, this.stopMessage, status);
  }

  /** Creates directories and files; a string is a START_FAILED message. */
  private prepare(): ProgramPlan | string {
    const { spec, deps } = this;
    if (spec.startError !== "" || spec.program === null) return spec.startError;
    try {
      mkdirSync(spec.cwd, { recursive: true });
      mkdirSync(spec.stateDir, { recursive: true });
      rmSync(spec.outputsPath, { force: true });
    } catch (error) {
      return `cannot create the working directory ${spec.cwd}: ${message(error)}`;
    }
    const program = spec.program;
    if (program.kind === "entrypoint") {
      const stat = statSync(program.path, { throwIfNoEntry: false });
      if (stat === undefined || !stat.isFile())
        return `entrypoint ${program.path} does not exist or is not a file`;
    }
    const plan = deps.adapter.plan(program, spec.stateDir);
    if ("error" in plan) return plan.error;
    try {
      for (const file of plan.files) writeFileSync(file.path, file.content);
    } catch (error) {
      return `cannot write the script: ${message(error)}`;
    }
    return plan;
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
    let outputs: Record<string, string> = {};
    let finalReason = reason;
    let finalMessage = text;
    if (status !== null) {
      const result = readOutputs(spec.outputsPath, spec.outputLimits);
      if (result.ok) outputs = result.outputs;
      else if (reason === TaskExitReason.COMPLETED) {
        finalReason = TaskExitReason.OUTPUTS_INVALID;
        finalMessage = result.message;
      } else finalMessage = `${text}; ${result.message}`;
    }
    if (this.finishedAtMicros === 0) this.finishedAtMicros = nowMicros();
    const out = this.stdout.snapshot();
    const err = this.stderr.snapshot();
    this.reason = finalReason;
    this.state = TaskState.EXITED;
    this.exited = create(TaskEventSchema, {
      event: {
        case: "exited",
        value: {
          runUid: spec.runUid,
          attempt: spec.attempt,
          reason: finalReason,
          message: finalMessage,
          exitCode: status?.exitCode ?? undefined,
          signal: status?.signal ?? "",
          stdoutTail: out.data,
          stderrTail: err.data,
          stdoutTruncated: out.truncated,
          stderrTruncated: err.truncated,
          stdoutBytes: BigInt(out.total),
          stderrBytes: BigInt(err.total),
          outputs,
          startedAtMicros: BigInt(this.startedAtMicros),
          finishedAtMicros: BigInt(this.finishedAtMicros),
        },
      },
    });
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

/** Reads and checks the outputs file, without reading a file that is over the size limit. */
function readOutputs(path: string, limits: OutputLimits): OutputsResult {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return parseOutputs(null, limits);
  if (!stat.isFile()) return { ok: false, message: "the outputs file is not a regular file" };
  if (stat.size > limits.maxBytes) {
    return { ok: false, message: `outputs file is ${stat.size} bytes, the limit is ${limits.maxBytes}` };
  }
  return parseOutputs(readFileSync(path), limits);
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
