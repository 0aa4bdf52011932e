/**
 * Registration is one function Run's registration on this server: it writes the source, starts
 * `concurrency` persistent workers that each load it once, and serves invocations on them with a
 * bounded wait queue, per-invocation timeouts (the worker is killed and replaced), crash
 * replacement, the idle timeout (the server's last-invocation clock), unregister by drain or
 * cancel, and Watch subscribers (state, logs keyed by invocation, the end).
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import {
  FunctionEndReason,
  type FunctionRegistration,
  FunctionRegistrationSchema,
  FunctionServiceWatchResponseSchema,
  FunctionState,
  type InvokeResponse,
  InvokeResponseSchema,
  InvokeFailure_Reason as Reason,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { nowMicros } from "../clock.ts";
import type { Logger } from "../logger.ts";
import { type LongTimer, longTimeout } from "../long-timer.ts";
import { makeDir } from "../make-dir.ts";
import type { FunctionSpec } from "./function-spec.ts";
import { InvokeError } from "./invoke-error.ts";
import { Splitter, splitLines } from "./log-lines.ts";
import { WatchStream } from "./watch-stream.ts";
import {
  type FunctionAdapter,
  type FunctionWorker,
  LoadError,
  type LogChunk,
  type WorkerCall,
  WorkerGone,
} from "./worker.ts";

export interface RegistrationDeps {
  functions: FunctionAdapter;
  interpreter: string;
  logger: Logger;
  /** A fresh short path for a worker's private socket. */
  socketPath(): string;
  /** Told about every finished invocation (metrics): its result label and handler time. */
  invoked(result: string, durationMs: number): void;
  /** Told once when the registration ends or fails. */
  ended(registration: Registration): void;
}

interface Slot {
  worker: FunctionWorker;
  ready: boolean;
  /** The invocation it serves now. */
  current: string | undefined;
  /** Why the server killed it, when it did. */
  killedFor: Reason | undefined;
  splitters: Record<LogChunk["stream"], Splitter>;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(error: InvokeError): void;
}

const MAX_REPLACE_BACKOFF_MS = 30_000;
/** Lines of load output kept for Watch subscribers, per stream. */
const MAX_LOAD_LINES = 200;

export class Registration {
  state = FunctionState.REGISTERING;
  endReason = FunctionEndReason.UNSPECIFIED;
  error = "";
  readyMicros = 0;
  lastInvocationMicros = 0;
  endedMicros = 0;
  invocations = 0;
  inFlight = 0;
  /** Resolves when loading is over (READY, FAILED, or ended while loading). */
  readonly loaded: Promise<void>;
  /** Resolves when the registration has ended or failed. */
  readonly finished: Promise<void>;

  private resolveFinished!: () => void;
  private readonly slots = new Set<Slot>();
  private idle: Slot[] = [];
  private queue: Waiter[] = [];
  private readonly watchers = new Set<WatchStream>();
  private idleTimer: LongTimer | undefined;
  private drainWaiter: (() => void) | undefined;
  private generation = 0;
  private replaceFailures = 0;
  private avgMs = 1;
  private readonly sourcePath: string;
  /** What loading the source printed (one worker's), replayed to every Watch subscriber. */
  private loadLogs: LogChunk[] = [];

  constructor(
    readonly spec: FunctionSpec,
    private readonly deps: RegistrationDeps,
  ) {
    this.sourcePath = join(spec.stateDir, deps.functions.sourceFile);
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    this.loaded = this.load().catch((error: unknown) => {
      deps.logger.error({ err: error, runUid: spec.runUid }, "function registration failed");
      this.fail(`runtime server error: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  get attempt(): number {
    return this.spec.attempt;
  }

  get terminal(): boolean {
    return this.state === FunctionState.ENDED || this.state === FunctionState.FAILED;
  }

  private get serving(): boolean {
    return this.state === FunctionState.READY || this.state === FunctionState.DRAINING;
  }

  private async load(): Promise<void> {
    const { spec, deps } = this;
    if (spec.loadError !== "") return this.fail(spec.loadError);
    try {
      makeDir(spec.cwd);
      makeDir(spec.stateDir);
      writeFileSync(this.sourcePath, spec.source);
    } catch (error) {
      return this.fail(
        `cannot prepare the function: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const problem = await deps.functions.check(deps.interpreter, this.sourcePath, spec.env);
    if (problem !== undefined) return this.fail(problem);
    if (this.terminal) return;
    const started = Array.from({ length: spec.limits.concurrency }, () => this.startSlot());
    const results = await Promise.allSettled(started.map((slot) => slot.worker.loaded));
    const failed = results.find((r) => r.status === "rejected");
    if (failed !== undefined) {
      const reason = failed.reason;
      return this.fail(reason instanceof LoadError ? reason.message : String(reason));
    }
    if (this.terminal) return;
    const first = results[0];
    if (first?.status === "fulfilled") this.loadLogs = first.value;
    for (const slot of started) {
      slot.ready = true;
      this.idle.push(slot);
    }
    this.state = FunctionState.READY;
    this.readyMicros = nowMicros();
    this.lastInvocationMicros = this.readyMicros;
    this.broadcastState();
    this.armIdle(spec.limits.idleTimeoutMs);
    deps.logger.info(
      { runUid: spec.runUid, attempt: spec.attempt, workers: started.length },
      "function registered",
    );
  }

  private startSlot(): Slot {
    const { spec, deps } = this;
    const dir = join(spec.stateDir, `w${++this.generation}`);
    makeDir(dir);
    const slot: Slot = {
      ready: false,
      current: undefined,
      killedFor: undefined,
      splitters: { stdout: new Splitter(), stderr: new Splitter() },
      worker: undefined as unknown as FunctionWorker,
    };
    slot.worker = deps.functions.start({
      interpreter: deps.interpreter,
      sourcePath: this.sourcePath,
      handler: spec.handler,
      cwd: spec.cwd,
      env: spec.env,
      dir,
      socketPath: deps.socketPath(),
      maxResponseBytes: spec.limits.maxResponseBytes,
      onStray: (chunk) => {
        if (this.watchers.size === 0) return;
        this.emitLines(slot.current ?? "", chunk.stream, slot.splitters[chunk.stream].push(chunk.text));
      },
    });
    this.slots.add(slot);
    slot.worker.exited.then(() => this.onExit(slot));
    return slot;
  }

  private onExit(slot: Slot): void {
    // Whatever the worker left running in its group goes with it.
    slot.worker.kill();
    this.slots.delete(slot);
    const at = this.idle.indexOf(slot);
    if (at !== -1) this.idle.splice(at, 1);
    for (const stream of ["stdout", "stderr"] as const) {
      this.emitLines(slot.current ?? "", stream, slot.splitters[stream].flush());
    }
    if (!slot.ready || !this.serving) return;
    if (slot.killedFor === undefined) {
      this.deps.logger.warn(
        { runUid: this.spec.runUid, pid: slot.worker.pid },
        "function worker exited; replacing it",
      );
    }
    this.replace();
  }

  /** Starts a worker in place of one that is gone; retries with backoff while it fails to load. */
  private replace(): void {
    if (!this.serving) return;
    const slot = this.startSlot();
    slot.worker.loaded.then(
      (logs) => {
        this.replaceFailures = 0;
        if (!this.serving) {
          slot.worker.kill();
          return;
        }
        this.emitLogs("", logs);
        slot.ready = true;
        this.release(slot);
      },
      (error: unknown) => {
        this.replaceFailures++;
        const delay = Math.min(MAX_REPLACE_BACKOFF_MS, 100 * 2 ** (this.replaceFailures - 1));
        this.deps.logger.warn(
          { runUid: this.spec.runUid, err: error, retryInMs: delay },
          "function worker replacement failed to load",
        );
        setTimeout(() => this.replace(), delay).unref?.();
      },
    );
  }

  /** Hands a free worker to the next waiter, or back to the idle set. */
  private release(slot: Slot): void {
    if (this.terminal) {
      slot.worker.kill();
      return;
    }
    const waiter = this.queue.shift();
    if (waiter !== undefined) waiter.resolve(slot);
    else this.idle.push(slot);
  }

  async invoke(call: WorkerCall, timeoutMs: number, signal: AbortSignal): Promise<InvokeResponse> {
    const { limits } = this.spec;
    if (this.state !== FunctionState.READY) {
      throw new InvokeError(Reason.NOT_READY, `the function is ${FunctionState[this.state]}, not READY`);
    }
    if (call.body.length > limits.maxRequestBytes) {
      throw new InvokeError(
        Reason.REQUEST_TOO_LARGE,
        `the request body is ${call.body.length} bytes, the limit is ${limits.maxRequestBytes}`,
      );
    }
    const arrived = performance.now();
    this.lastInvocationMicros = nowMicros();
    const timeout =
      timeoutMs === 0 || timeoutMs > limits.invocationTimeoutMs ? limits.invocationTimeoutMs : timeoutMs;
    let slot = this.queue.length === 0 ? this.idle.pop() : undefined;
    if (slot === undefined) {
      if (this.queue.length >= limits.queueLimit) {
        this.deps.invoked("BUSY", 0);
        const retryAfterMs = Math.min(
          10_000,
          Math.max(10, Math.ceil((this.avgMs * (this.queue.length + 1)) / limits.concurrency)),
        );
        throw new InvokeError(
          Reason.BUSY,
          `the function is busy: ${this.inFlight} invocations running, ${this.queue.length} waiting (queue limit ${limits.queueLimit})`,
          retryAfterMs,
        );
      }
      slot = await this.wait(timeout, signal);
    }
    const queuedMs = performance.now() - arrived;
    return this.run(slot, call, Math.max(1, timeout - queuedMs), queuedMs);
  }

  private wait(timeoutMs: number, signal: AbortSignal): Promise<Slot> {
    return new Promise((resolve, reject) => {
      const leave = (error: InvokeError) => {
        const at = this.queue.indexOf(waiter);
        if (at !== -1) this.queue.splice(at, 1);
        done();
        this.deps.invoked(Reason[error.reason], 0);
        reject(error);
      };
      const timer = setTimeout(
        () =>
          leave(new InvokeError(Reason.TIMEOUT, `no worker became free within the ${timeoutMs} ms timeout`)),
        timeoutMs,
      );
      const onAbort = () => leave(new InvokeError(Reason.CANCELLED, "the caller went away"));
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        resolve: (slot) => {
          done();
          resolve(slot);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      };
      signal.addEventListener("abort", onAbort);
      this.queue.push(waiter);
    });
  }

  private async run(
    slot: Slot,
    call: WorkerCall,
    timeoutMs: number,
    queuedMs: number,
  ): Promise<InvokeResponse> {
    this.inFlight++;
    slot.current = call.invocationId;
    const started = performance.now();
    const timer = setTimeout(() => {
      slot.killedFor = Reason.TIMEOUT;
      slot.worker.kill();
    }, timeoutMs);
    let result = "OK";
    try {
      const reply = await slot.worker.invoke(call);
      clearTimeout(timer);
      const durationMs = performance.now() - started;
      this.avgMs = this.avgMs * 0.9 + durationMs * 0.1;
      slot.current = undefined;
      this.emitLogs(call.invocationId, reply.logs);
      this.release(slot);
      const timing = {
        durationMicros: BigInt(Math.round(durationMs * 1000)),
        queuedMicros: BigInt(Math.round(queuedMs * 1000)),
      };
      if (reply.kind === "too_large") {
        result = "RESPONSE_TOO_LARGE";
        throw new InvokeError(
          Reason.RESPONSE_TOO_LARGE,
          `the response body is ${reply.bytes} bytes, the limit is ${this.spec.limits.maxResponseBytes}`,
        );
      }
      if (reply.kind === "handler_error") {
        result = "HANDLER_ERROR";
        return create(InvokeResponseSchema, { handlerError: { ...reply.error }, ...timing });
      }
      return create(InvokeResponseSchema, {
        status: reply.status,
        contentType: reply.contentType,
        body: reply.body as Uint8Array<ArrayBuffer>,
        headers: reply.headers,
        ...timing,
      });
    } catch (error) {
      clearTimeout(timer);
      if (error instanceof InvokeError) throw error;
      slot.current = undefined;
      if (!(error instanceof WorkerGone)) {
        this.deps.logger.error(
          { err: error, runUid: this.spec.runUid },
          "function worker broke its protocol",
        );
        slot.worker.kill();
      }
      const reason = slot.killedFor ?? Reason.WORKER_CRASHED;
      result = Reason[reason];
      throw new InvokeError(reason, failureMessage(reason, timeoutMs));
    } finally {
      this.inFlight--;
      this.invocations++;
      this.deps.invoked(result, performance.now() - started);
      if (this.inFlight === 0 && this.queue.length === 0) this.drainWaiter?.();
    }
  }

  /** Ends the registration: DRAIN waits for accepted invocations up to drainMs, CANCEL stops them now. */
  async unregister(drain: boolean, drainMs: number, reason: FunctionEndReason): Promise<void> {
    if (this.terminal) return;
    if (drain && this.state === FunctionState.READY) {
      this.state = FunctionState.DRAINING;
      this.idleTimer?.cancel();
      this.broadcastState();
      if (this.inFlight > 0 || this.queue.length > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          this.drainWaiter = resolve;
          timer = setTimeout(resolve, drainMs);
        });
        clearTimeout(timer);
      }
    }
    this.end(reason);
  }

  private end(reason: FunctionEndReason): void {
    if (this.terminal) return;
    this.state = FunctionState.ENDED;
    this.endReason = reason;
    this.finish();
  }

  private fail(message: string): void {
    if (this.terminal) return;
    this.state = FunctionState.FAILED;
    this.endReason = FunctionEndReason.REGISTRATION_FAILED;
    this.error = message;
    this.finish();
  }

  private finish(): void {
    this.endedMicros = nowMicros();
    this.idleTimer?.cancel();
    for (const waiter of this.queue.splice(0)) {
      waiter.reject(new InvokeError(Reason.CANCELLED, "the function registration ended"));
    }
    for (const slot of this.slots) {
      if (slot.current !== undefined) slot.killedFor = Reason.CANCELLED;
      slot.worker.kill();
    }
    this.idle = [];
    const final = this.toProto();
    for (const watcher of this.watchers) {
      watcher.push(create(FunctionServiceWatchResponseSchema, { event: { case: "state", value: final } }));
      watcher.push(create(FunctionServiceWatchResponseSchema, { event: { case: "ended", value: final } }));
      watcher.end();
    }
    this.watchers.clear();
    this.deps.logger.info(
      {
        runUid: this.spec.runUid,
        attempt: this.spec.attempt,
        state: FunctionState[this.state],
        reason: FunctionEndReason[this.endReason],
        invocations: this.invocations,
        error: this.error || undefined,
      },
      "function ended",
    );
    // Workers are killed; their files go once they are gone.
    Promise.allSettled([...this.slots].map((s) => s.worker.exited)).then(() =>
      rmSync(this.spec.stateDir, { recursive: true, force: true }),
    );
    this.deps.ended(this);
    this.resolveFinished();
  }

  private armIdle(ms: number): void {
    if (ms === 0) return;
    this.idleTimer = longTimeout(() => {
      if (this.state !== FunctionState.READY) return;
      if (this.inFlight > 0 || this.queue.length > 0) return this.armIdle(this.spec.limits.idleTimeoutMs);
      const idleMs = (nowMicros() - this.lastInvocationMicros) / 1000;
      const left = this.spec.limits.idleTimeoutMs - idleMs;
      if (left > 0) return this.armIdle(Math.ceil(left));
      this.end(FunctionEndReason.IDLE_TIMEOUT);
    }, ms);
  }

  /** A Watch subscriber: the state now, then logs and state changes, then the end. */
  watch(): WatchStream {
    const stream = new WatchStream((s) => this.watchers.delete(s));
    const now = this.toProto();
    stream.push(create(FunctionServiceWatchResponseSchema, { event: { case: "state", value: now } }));
    for (const chunk of this.loadLogs) {
      const lines = splitLines(chunk.text).slice(-MAX_LOAD_LINES);
      stream.push(
        create(FunctionServiceWatchResponseSchema, {
          event: {
            case: "log",
            value: { invocationId: "", stream: chunk.stream, lines, timeMicros: BigInt(this.readyMicros) },
          },
        }),
      );
    }
    if (this.terminal) {
      stream.push(create(FunctionServiceWatchResponseSchema, { event: { case: "ended", value: now } }));
      stream.end();
    } else this.watchers.add(stream);
    return stream;
  }

  private broadcastState(): void {
    if (this.watchers.size === 0) return;
    const value = this.toProto();
    for (const w of this.watchers)
      w.push(create(FunctionServiceWatchResponseSchema, { event: { case: "state", value } }));
  }

  private emitLogs(invocationId: string, chunks: LogChunk[]): void {
    if (this.watchers.size === 0) return;
    for (const chunk of chunks) this.emitLines(invocationId, chunk.stream, splitLines(chunk.text));
  }

  private emitLines(invocationId: string, stream: string, lines: string[]): void {
    if (lines.length === 0 || this.watchers.size === 0) return;
    const event = create(FunctionServiceWatchResponseSchema, {
      event: { case: "log", value: { invocationId, stream, lines, timeMicros: BigInt(nowMicros()) } },
    });
    for (const w of this.watchers) w.push(event);
  }

  toProto(): FunctionRegistration {
    const { spec } = this;
    const { concurrency, queueLimit, maxRequestBytes, maxResponseBytes, invocationTimeoutMs, idleTimeoutMs } =
      spec.limits;
    return create(FunctionRegistrationSchema, {
      runUid: spec.runUid,
      runName: spec.runName,
      attempt: spec.attempt,
      state: this.state,
      endReason: this.endReason,
      error: this.error,
      concurrency: this.terminal ? 0 : concurrency,
      inFlight: this.inFlight,
      queued: this.queue.length,
      invocations: BigInt(this.invocations),
      readyMicros: BigInt(this.readyMicros),
      lastInvocationMicros: BigInt(this.lastInvocationMicros),
      endedMicros: BigInt(this.endedMicros),
      limits: { queueLimit, maxRequestBytes, maxResponseBytes, invocationTimeoutMs, idleTimeoutMs },
    });
  }
}

function failureMessage(reason: Reason, timeoutMs: number): string {
  switch (reason) {
    case Reason.TIMEOUT:
      return `the invocation did not finish within ${Math.round(timeoutMs)} ms; its worker was killed and is replaced`;
    case Reason.CANCELLED:
      return "the function registration was cancelled during the invocation";
    default:
      return "the worker died during the invocation; it is replaced";
  }
}
