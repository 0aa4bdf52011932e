/**
 * The bash function worker: a warm `bash --norc -c FUNCTION_BOOTSTRAP` sources the script once,
 * checks that the handler function exists, then serves invocations, each in a fork of itself.
 * The fork for the next invocation is made ahead of time and waits for its go (a newline on fd
 * 61, the shell's stdin; bash reads a pipe one byte at a time, so the less it reads the better),
 * so neither the fork nor the exit and reaping of the process are on an invocation's path: the
 * fork reports its status itself from an EXIT trap ("C<status>" on fd 62, the shell's stdout),
 * and the warm shell reports every fork's status after `wait` ("P<status>"), which counts only
 * when the fork died without reporting (a signal, or a handler that replaced the EXIT trap).
 * The server writes the body to `in` and the invocation's variables (quoted assignments) to
 * `vars`; the fork runs `source vars; handler <in >out 2>err`; the response is `out`, the
 * handler's stderr `err`, optional status/content type/headers the `meta` file
 * ($KRUNTIME_RESPONSE_META). Files live in the worker's private directory; fds 61/62 are high
 * so that a script's own `exec 3>…` cannot touch them.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type {
  FunctionAdapter,
  FunctionWorker,
  LogChunk,
  WorkerCall,
  WorkerReply,
  WorkerSpec,
} from "../server/functions/worker.ts";
import { LoadError, WorkerGone } from "../server/functions/worker.ts";
import {
  killGroup,
  pumpText,
  spawnWorker,
  type WorkerSubprocess,
} from "../server/functions/worker-process.ts";
import { quote } from "./quote.ts";
import { parseMeta, responseContentType } from "./response-meta.ts";

export const FUNCTION_BOOTSTRAP = `exec 61<&0 62>&1 0</dev/null 1>&2
__kr_source=$1 __kr_handler=$2 __kr_dir=$3
set --
source -- "$__kr_source" >"$__kr_dir/load.out" 2>"$__kr_dir/load.err"
if ! declare -F -- "$__kr_handler" >/dev/null; then printf 'M\\n' >&62; exit 0; fi
printf 'R\\n' >&62
while :; do
  { IFS= read -r __kr_cmd <&61 || kill -KILL $$; exec 61<&- <"$__kr_dir/in" >"$__kr_dir/out" 2>"$__kr_dir/err"; trap 'printf "C%d\\\\n" "$?" >&62' EXIT; source "$__kr_dir/vars"; "$__kr_handler"; } &
  if wait "$!"; then __kr_st=0; else __kr_st=$?; fi
  printf 'P%d\\n' "$__kr_st" >&62
done`;

/** Largest stderr kept for the logs of one invocation. */
const MAX_LOG_BYTES = 1024 * 1024;
/** Stderr tail of a failed handler, in its HandlerError. */
const ERROR_TAIL = 8 * 1024;

const NEWLINE = new Uint8Array([0x0a]);
const decoder = new TextDecoder();

/** KRUNTIME_HEADER_<NAME>: upper-case, every character outside [A-Z0-9] becomes "_". */
export function headerVariable(name: string): string {
  return `KRUNTIME_HEADER_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/** The assignments the fork sources before it calls the handler. */
export function invocationVars(call: WorkerCall, metaPath: string): string {
  const clean = (s: string) => quote(s.replaceAll("\0", ""));
  const parts = [
    `export KRUNTIME_INVOCATION_ID=${clean(call.invocationId)}`,
    `KRUNTIME_CONTENT_TYPE=${clean(call.contentType)}`,
    `KRUNTIME_RESPONSE_META=${clean(metaPath)}`,
  ];
  for (const [name, value] of Object.entries(call.headers))
    parts.push(`${headerVariable(name)}=${clean(value)}`);
  return `${parts.join(" ")}\n`;
}

function readText(path: string, max = MAX_LOG_BYTES): string {
  try {
    const bytes = readFileSync(path);
    return decoder.decode(bytes.length > max ? bytes.subarray(bytes.length - max) : bytes);
  } catch {
    return "";
  }
}

class BashWorker implements FunctionWorker {
  readonly loaded: Promise<LogChunk[]>;
  readonly exited: Promise<void>;
  private readonly proc: WorkerSubprocess;
  private readonly paths: { in: string; vars: string; out: string; err: string; meta: string };
  private pending: { resolve(line: string): void; reject(error: Error): void } | undefined;
  private gone = false;
  /** The running fork reported its status itself: skip the warm shell's report of it. */
  private reported = false;

  constructor(private readonly spec: WorkerSpec) {
    const { dir } = spec;
    this.paths = {
      in: join(dir, "in"),
      vars: join(dir, "vars"),
      out: join(dir, "out"),
      err: join(dir, "err"),
      meta: join(dir, "meta"),
    };
    this.proc = spawnWorker(
      [
        spec.interpreter,
        "--norc",
        "-c",
        FUNCTION_BOOTSTRAP,
        "kruntime-function",
        spec.sourcePath,
        spec.handler,
        dir,
      ],
      spec.cwd,
      spec.env,
    );
    const stderr = pumpText(this.proc.stderr, "stderr", spec.onStray);
    this.exited = this.proc.exited.then(() => {
      this.gone = true;
      this.pending?.reject(new WorkerGone(`the bash worker ${this.proc.pid} exited`));
      this.pending = undefined;
    });
    this.loaded = this.nextLine().then(
      (line) => {
        const logs = this.loadLogs();
        if (line === "R") return logs;
        this.kill();
        const err = readText(join(dir, "load.err")).trim();
        throw new LoadError(
          `the script defines no function ${JSON.stringify(spec.handler)}${err ? `; its stderr: ${err}` : ""}`,
        );
      },
      async () => {
        await stderr;
        const err = readText(join(dir, "load.err")).trim();
        const status = this.proc.signalCode ?? `exit status ${this.proc.exitCode}`;
        throw new LoadError(
          `the script ended the shell while it was sourced (${status})${err ? `: ${err}` : ""}`,
        );
      },
    );
    this.loaded.catch(() => {});
    void this.readLoop();
  }

  get pid(): number {
    return this.proc.pid;
  }

  private loadLogs(): LogChunk[] {
    const logs: LogChunk[] = [];
    const out = readText(join(this.spec.dir, "load.out"));
    const err = readText(join(this.spec.dir, "load.err"));
    if (out !== "") logs.push({ stream: "stdout", text: out });
    if (err !== "") logs.push({ stream: "stderr", text: err });
    return logs;
  }

  private async readLoop(): Promise<void> {
    let buffered = "";
    try {
      for await (const chunk of this.proc.stdout) {
        buffered += decoder.decode(chunk, { stream: true });
        let at = buffered.indexOf("\n");
        while (at !== -1) {
          const line = buffered.slice(0, at);
          buffered = buffered.slice(at + 1);
          // A fork reports its own status on exit ("C"), before the process is gone and reaped;
          // the warm shell reports every fork's status after wait ("P"), which only counts when
          // the fork died without reporting (a signal).
          if (line.startsWith("P") && this.reported) {
            this.reported = false;
          } else {
            if (line.startsWith("C")) this.reported = true;
            const pending = this.pending;
            this.pending = undefined;
            pending?.resolve(line);
          }
          at = buffered.indexOf("\n");
        }
      }
    } catch {
      // the pipe failed; the exit handler fails what is pending
    }
  }

  private nextLine(): Promise<string> {
    if (this.gone) return Promise.reject(new WorkerGone(`the bash worker ${this.proc.pid} exited`));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
    });
  }

  async invoke(call: WorkerCall): Promise<WorkerReply> {
    const { paths } = this;
    writeFileSync(paths.in, call.body);
    writeFileSync(paths.vars, invocationVars(call, paths.meta));
    const done = this.nextLine();
    try {
      this.proc.stdin.write(NEWLINE);
      this.proc.stdin.flush();
    } catch {
      // the shell is gone: its exit rejects the reply
    }
    const exitCode = Number((await done).slice(1));
    const err = readText(paths.err);
    const logs: LogChunk[] = err === "" ? [] : [{ stream: "stderr", text: err }];
    let metaText: string | undefined;
    if (existsSync(paths.meta)) {
      metaText = readFileSync(paths.meta, "utf8");
      unlinkSync(paths.meta);
    }
    if (exitCode !== 0) {
      const out = readText(paths.out);
      if (out !== "") logs.unshift({ stream: "stdout", text: out });
      const tail = err.length > ERROR_TAIL ? `[... stderr cut ...]\n${err.slice(-ERROR_TAIL)}` : err;
      return {
        kind: "handler_error",
        error: {
          type: "NonZeroExit",
          message: `the handler exited with status ${exitCode}`,
          traceback: tail,
          exitCode,
        },
        logs,
      };
    }
    const body = readFileSync(paths.out);
    if (body.length > this.spec.maxResponseBytes) return { kind: "too_large", bytes: body.length, logs };
    const meta = parseMeta(metaText ?? "");
    return {
      kind: "ok",
      status: meta.status ?? 200,
      contentType: meta.contentType ?? responseContentType(body),
      headers: meta.headers,
      body,
      logs,
    };
  }

  kill(): void {
    killGroup(this.proc.pid);
  }
}

export const bashFunctions: FunctionAdapter = {
  sourceFile: "function.sh",
  async check(interpreter, sourcePath, env) {
    const proc = Bun.spawn({
      cmd: [interpreter, "-n", sourcePath],
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    return code === 0 ? undefined : `syntax error: ${stderr.trim() || `bash -n exited with status ${code}`}`;
  },
  start: (spec) => new BashWorker(spec),
};
