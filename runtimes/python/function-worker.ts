/**
 * The python function worker on the server's side: listens on the worker's private socket, starts
 * `python3 -c FUNCTION_BOOTSTRAP`, waits for its ready (or load failure) frame, and exchanges one
 * request frame and one reply frame per invocation over the socket. Nothing is spawned or written
 * to disk per call. The worker's stdout/stderr pipes carry only raw output (logged as such).
 */
import { encodeFrame, type Frame, FrameReader } from "../server/functions/frames.ts";
import type {
  FunctionAdapter,
  FunctionWorker,
  LogChunk,
  WorkerCall,
  WorkerReply,
  WorkerSpec,
} from "../server/functions/worker.ts";
import { LoadError, WorkerGone } from "../server/functions/worker.ts";
import { WorkerChannel } from "../server/functions/worker-channel.ts";
import {
  killGroup,
  pumpText,
  spawnWorker,
  type WorkerSubprocess,
} from "../server/functions/worker-process.ts";
import { FUNCTION_BOOTSTRAP } from "./function-bootstrap.ts";

function frameLogs(header: Record<string, unknown>): LogChunk[] {
  const logs: LogChunk[] = [];
  if (typeof header.o === "string") logs.push({ stream: "stdout", text: header.o });
  if (typeof header.e === "string") logs.push({ stream: "stderr", text: header.e });
  return logs;
}

class PythonWorker implements FunctionWorker {
  readonly loaded: Promise<LogChunk[]>;
  readonly exited: Promise<void>;
  private readonly proc: WorkerSubprocess;
  private readonly reader = new FrameReader();
  private readonly channel: WorkerChannel;
  private pending: { resolve(frame: Frame): void; reject(error: Error): void } | undefined;
  private gone = false;
  private stderrTail: Promise<string>;

  constructor(spec: WorkerSpec) {
    this.channel = new WorkerChannel(
      spec.socketPath,
      (chunk) => this.onData(chunk),
      // The worker hung up: it cannot answer any more; its exit fails what is pending.
      () => this.kill(),
    );
    this.proc = spawnWorker(
      [
        spec.interpreter,
        "-c",
        FUNCTION_BOOTSTRAP,
        spec.socketPath,
        spec.sourcePath,
        spec.handler,
        String(spec.maxResponseBytes),
      ],
      spec.cwd,
      spec.env,
    );
    void pumpText(this.proc.stdout, "stdout", spec.onStray);
    this.stderrTail = pumpText(this.proc.stderr, "stderr", spec.onStray);
    this.exited = this.proc.exited.then(() => {
      this.gone = true;
      this.channel.close();
      this.pending?.reject(new WorkerGone(`the python worker ${this.proc.pid} exited`));
      this.pending = undefined;
    });
    this.loaded = this.next().then(
      (frame) => {
        if (frame.header.k === "ready") return frameLogs(frame.header);
        this.kill();
        throw new LoadError(String(frame.header.error ?? "the source failed to load"));
      },
      async () => {
        const stderr = (await this.stderrTail).trim();
        const status = this.proc.signalCode ?? `exit status ${this.proc.exitCode}`;
        throw new LoadError(
          `the python worker exited while loading (${status})${stderr ? `: ${stderr}` : ""}`,
        );
      },
    );
    this.loaded.catch(() => {});
  }

  get pid(): number {
    return this.proc.pid;
  }

  private onData(chunk: Uint8Array): void {
    for (const frame of this.reader.push(chunk)) {
      const pending = this.pending;
      this.pending = undefined;
      pending?.resolve(frame);
    }
  }

  private next(): Promise<Frame> {
    if (this.gone) return Promise.reject(new WorkerGone(`the python worker ${this.proc.pid} exited`));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
    });
  }

  async invoke(call: WorkerCall): Promise<WorkerReply> {
    const reply = this.next();
    this.channel.write(
      encodeFrame({ i: call.invocationId, c: call.contentType, h: call.headers }, call.body),
    );
    const { header, body } = await reply;
    const logs = frameLogs(header);
    switch (header.k) {
      case "ok":
        return {
          kind: "ok",
          status: Number(header.s),
          contentType: String(header.c),
          headers: (header.h as Record<string, string> | undefined) ?? {},
          body,
          logs,
        };
      case "error": {
        const x = header.x as { t: string; m: string; b: string };
        return {
          kind: "handler_error",
          error: { type: x.t, message: x.m, traceback: x.b, exitCode: 0 },
          logs,
        };
      }
      case "big":
        return { kind: "too_large", bytes: Number(header.n), logs };
      default:
        throw new Error(`unexpected frame from the python worker: ${JSON.stringify(header.k)}`);
    }
  }

  kill(): void {
    killGroup(this.proc.pid);
  }
}

export const pythonFunctions: FunctionAdapter = {
  sourceFile: "function.py",
  check: async () => undefined,
  start: (spec) => new PythonWorker(spec),
};
