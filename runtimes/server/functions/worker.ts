/**
 * FunctionWorker is one persistent process of a function registration: it loaded the source once
 * and serves one invocation at a time. The language adapters implement it (python: a framed
 * protocol on the worker's pipes; bash: a warm shell that forks the handler per invocation); the
 * registration only sees this interface.
 */

/** One invocation as a worker gets it. */
export interface WorkerCall {
  invocationId: string;
  body: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
}

/** Output of the function's code other than the response, as text. */
export interface LogChunk {
  stream: "stdout" | "stderr";
  text: string;
}

export interface HandlerFailure {
  type: string;
  message: string;
  traceback: string;
  exitCode: number;
}

/** What a worker answers to one call. */
export type WorkerReply =
  | {
      kind: "ok";
      status: number;
      contentType: string;
      headers: Record<string, string>;
      body: Uint8Array;
      logs: LogChunk[];
    }
  | { kind: "handler_error"; error: HandlerFailure; logs: LogChunk[] }
  /** The handler's response was above the limit (`bytes` long); the body was not sent. */
  | { kind: "too_large"; bytes: number; logs: LogChunk[] };

/** The source could not be loaded; `message` is what the registration reports. */
export class LoadError extends Error {
  override name = "LoadError";
}

/** The worker process ended while it was serving a call. */
export class WorkerGone extends Error {
  override name = "WorkerGone";
}

export interface WorkerSpec {
  /** Interpreter binary (python3, bash). */
  interpreter: string;
  /** File holding the registration's source (written by the registration, private to the server). */
  sourcePath: string;
  handler: string;
  /** Absolute working directory (the process's cwd). */
  cwd: string;
  /** Complete environment of the worker. */
  env: Record<string, string>;
  /** Private directory of this worker (bash keeps its per-invocation files here). */
  dir: string;
  /** A short path for a private Unix socket of this worker (workers that talk over one). */
  socketPath: string;
  maxResponseBytes: number;
  /** Output written outside the protocol (raw file descriptors, child processes), as it arrives. */
  onStray(chunk: LogChunk): void;
}

export interface FunctionWorker {
  readonly pid: number;
  /** Resolves with the output of loading once the handler is invocable; rejects with a LoadError. */
  readonly loaded: Promise<LogChunk[]>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Serves one call; rejects with WorkerGone when the process ends first. One call at a time. */
  invoke(call: WorkerCall): Promise<WorkerReply>;
  /** SIGKILL to the worker's process group (the worker and whatever its handler started). */
  kill(): void;
}

/** How a language starts function workers. */
export interface FunctionAdapter {
  /** File name of the source in the registration's private directory ("function.py"). */
  readonly sourceFile: string;
  /** A load error found without starting a worker (bash: `bash -n`), or undefined. */
  check(interpreter: string, sourcePath: string, env: Record<string, string>): Promise<string | undefined>;
  start(spec: WorkerSpec): FunctionWorker;
}
