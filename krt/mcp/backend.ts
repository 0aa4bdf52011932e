/**
 * What the tools do, with the caller's own credentials: Runs are created, watched and patched in
 * the API server with the kubeconfig's user (krt's kube client), session operations and function
 * calls go to the gateway krt locates (krt/gateway/*) with that user's bearer token. Every failure
 * leaves here as a CliError in krt's words (sessionError, invokeError, CliError.from), which
 * tool-errors.ts turns into a tool error.
 */

import { Code, ConnectError } from "@connectrpc/connect";
import {
  isTerminalPhase,
  type Run,
  RunPhase,
  RunResource,
  RuntimeResource,
  TerminationMode,
} from "@kruntimes/api";
import { FailureSchema, RunNotReadySchema } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { ExitReason, FileType, WriteMode } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { isNotFound, type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { OpenGateway } from "../commands/gateway-command.ts";
import { sessionRun } from "../commands/session.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { invokeFunction } from "../gateway/invoke-client.ts";
import { invokeError } from "../gateway/invoke-errors.ts";
import { buildInvokeRequest, guessContentType } from "../gateway/request.ts";
import { type SessionCallTarget, upload } from "../gateway/session-client.ts";
import { sessionError } from "../gateway/session-errors.ts";
import { buildRun } from "../runs/build-run.ts";
import { getRun, getRuntime } from "../runs/fetch.ts";
import { type WaitOptions, waitForRun } from "../runs/wait.ts";
import { encodeContent, HeadTail } from "./bounded.ts";
import { GatewayPool } from "./gateway-pool.ts";
import type { McpLimits, ToolInput, ToolName, ToolOutput } from "./schemas.ts";

/** The operations behind the tools; server.ts registers them, tests may stand one in. */
export type McpBackend = {
  readonly namespace: string;
} & {
  [N in ToolName]: (input: ToolInput<N>, signal?: AbortSignal) => Promise<ToolOutput<N>>;
};

export interface BackendDeps {
  kube: KubeClient;
  namespace: string;
  /** Locates the gateway with the caller's token (GatewayCommand.openGateway). */
  openGateway: () => Promise<OpenGateway>;
  limits: McpLimits;
  nowMicros: () => number;
  /** How long a located gateway is reused. */
  gatewayTtlMs?: number;
}

const FILE_TYPE: Record<FileType, "file" | "dir" | "link" | "other" | "unknown"> = {
  [FileType.UNSPECIFIED]: "unknown",
  [FileType.FILE]: "file",
  [FileType.DIRECTORY]: "dir",
  [FileType.SYMLINK]: "link",
  [FileType.OTHER]: "other",
};

const WRITE_MODE = { create: WriteMode.CREATE, truncate: WriteMode.TRUNCATE, append: WriteMode.APPEND };

const EXIT_REASON: Record<ExitReason, ToolOutput<"exec">["reason"]> = {
  [ExitReason.UNSPECIFIED]: "exited",
  [ExitReason.EXITED]: "exited",
  [ExitReason.TIMEOUT]: "timeout",
  [ExitReason.CANCELLED]: "cancelled",
  [ExitReason.START_FAILED]: "start_failed",
};

/** A connection that never reached the gateway (as opposed to the gateway's own answers). */
function unreachable(e: unknown): boolean {
  return invokeError(e, { namespace: "", run: "", via: "" }).exitCode === ExitCode.Unavailable;
}

export class KruntimesBackend implements McpBackend {
  readonly namespace: string;
  private readonly kube: KubeClient;
  private readonly limits: McpLimits;
  private readonly pool: GatewayPool<OpenGateway>;

  constructor(private readonly deps: BackendDeps) {
    this.namespace = deps.namespace;
    this.kube = deps.kube;
    this.limits = deps.limits;
    this.pool = new GatewayPool(deps.openGateway, {
      ttlMs: deps.gatewayTtlMs ?? 5 * 60_000,
      unreachable,
    });
  }

  /** Finds the gateway now (for the startup log); the tools would on first use. */
  async probeGateway(): Promise<string> {
    return this.pool.use(async (gw) => gw.target.via);
  }

  close(): void {
    this.pool.close();
  }

  async create_session(
    a: ToolInput<"create_session">,
    signal?: AbortSignal,
  ): Promise<ToolOutput<"create_session">> {
    const ns = this.namespace;
    await this.checkRuntime(a.runtime);
    const idle = a.idleTimeoutSeconds ?? this.limits.sessionIdleTimeoutSeconds;
    const body = sessionRun({
      namespace: ns,
      runtime: a.runtime,
      ...(a.name ? { name: a.name } : {}),
      ...(idle ? { idleTimeout: `${idle}s` } : {}),
      ...(a.timeoutSeconds ? { timeout: `${a.timeoutSeconds}s` } : {}),
      createdMicros: this.deps.nowMicros(),
    });
    const created = await this.kube.create<Run>(path(RunResource, ns), body).catch((e) => {
      throw CliError.from(e);
    });
    const name = created.metadata.name as string;
    let last: Run = created;
    let run: Run;
    try {
      run = await this.waitFor(
        name,
        {
          until: (r) => r.status?.phase === RunPhase.Ready,
          timeoutMs: a.waitSeconds * 1000,
          onUpdate: (r) => {
            last = r;
          },
        },
        signal,
      );
    } catch (e) {
      if (!(e instanceof CliError && e.exitCode === ExitCode.WaitTimeout)) throw CliError.from(e);
      await this.terminate(name, TerminationMode.Immediate);
      const s = last.status;
      const why = s?.waitingReason ? `: ${s.waitingReason}${s.message ? ` (${s.message})` : ""}` : "";
      throw new CliError(
        ExitCode.WaitTimeout,
        `session "${name}" was not Ready within ${a.waitSeconds}s (phase ${s?.phase ?? "Pending"}${why}); it was cancelled, so it holds no pod`,
        `a session needs a whole, empty warm pod of Runtime "${a.runtime}": retry later, with a larger waitSeconds, or ask for more replicas of the Runtime`,
      );
    }
    const s = run.status;
    if (s?.phase !== RunPhase.Ready)
      throw new CliError(
        ExitCode.RunFailed,
        `session "${name}" ended ${s?.phase}${s?.reason ? ` (${s.reason})` : ""} before it was Ready${s?.message ? `: ${s.message}` : ""}`,
        "create another one; if it fails again, the Runtime's pods are unhealthy: ask its owner",
      );
    const pod = s.endpoint?.pod ?? s.assignment?.pod;
    return { session: name, namespace: ns, runtime: a.runtime, phase: s.phase, ...(pod ? { pod } : {}) };
  }

  async exec(a: ToolInput<"exec">, signal?: AbortSignal): Promise<ToolOutput<"exec">> {
    if (a.stdin !== undefined) this.checkWriteSize(new TextEncoder().encode(a.stdin).byteLength, "stdin");
    return this.session(a.session, undefined, async (gw, t) => {
      const out = new HeadTail(this.limits.maxOutputBytes);
      const err = new HeadTail(this.limits.maxOutputBytes);
      const started = performance.now();
      let exited: { reason: ExitReason; exitCode: number; signal: string; message: string } | undefined;
      const stream = gw.client.exec(
        {
          target: { namespace: t.namespace, run: t.run },
          command: { program: { case: "shell", value: a.command } },
          env: a.env ?? {},
          workingDir: a.workdir ?? "",
          timeoutMs: (a.timeoutSeconds ?? 0) * 1000,
          stdin: a.stdin !== undefined ? new TextEncoder().encode(a.stdin) : new Uint8Array(),
        },
        { headers: bearer(t.token), ...(signal ? { signal } : {}) },
      );
      for await (const ev of stream) {
        if (ev.event.case === "output")
          (ev.event.value.stream === "stderr" ? err : out).push(ev.event.value.data);
        else if (ev.event.case === "exited") exited = ev.event.value;
      }
      if (!exited)
        throw new CliError(
          ExitCode.Internal,
          "the command's output ended without its exit",
          "retry the command",
        );
      const reason = EXIT_REASON[exited.reason];
      return {
        session: t.run,
        exitCode: reason === "exited" && !exited.signal ? exited.exitCode : null,
        reason,
        ...(exited.signal ? { signal: exited.signal } : {}),
        ...(exited.message ? { message: exited.message } : {}),
        stdout: out.text(),
        stderr: err.text(),
        stdoutBytes: out.total,
        stderrBytes: err.total,
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        durationMs: Math.round(performance.now() - started),
      };
    });
  }

  async read_file(a: ToolInput<"read_file">, signal?: AbortSignal): Promise<ToolOutput<"read_file">> {
    return this.session(a.session, a.path, async (gw, t) => {
      // The gateway streams the file from its start; bytes before `offset` are skipped here and the
      // stream is dropped as soon as enough has arrived.
      const want = a.maxBytes;
      const kept = new Uint8Array(want + 1);
      let got = 0;
      let seen = 0;
      let size = 0;
      let isDir = false;
      const abort = new AbortController();
      const onAbort = () => abort.abort();
      signal?.addEventListener("abort", onAbort);
      try {
        for await (const c of gw.client.readFile(
          { target: { namespace: t.namespace, run: t.run }, path: a.path },
          { headers: bearer(t.token), signal: abort.signal },
        )) {
          if (c.info) {
            size = Number(c.info.size);
            isDir = c.info.type === FileType.DIRECTORY;
            if (isDir) break;
          }
          const from = Math.max(0, a.offset - seen);
          seen += c.data.byteLength;
          if (from >= c.data.byteLength) continue;
          const piece = c.data.subarray(from, from + (want + 1 - got));
          kept.set(piece, got);
          got += piece.byteLength;
          if (got > want) break;
        }
      } finally {
        signal?.removeEventListener("abort", onAbort);
        abort.abort();
      }
      if (isDir)
        throw CliError.usage(
          `${t.run}:${a.path} is a directory`,
          "list it with list_files, or read a file in it",
        );
      const truncated = got > want;
      const bytes = kept.subarray(0, Math.min(got, want));
      const enc = encodeContent(bytes, truncated);
      const end = a.offset + enc.bytes;
      return {
        session: t.run,
        path: a.path,
        size,
        offset: a.offset,
        bytes: enc.bytes,
        encoding: enc.encoding,
        content: enc.content,
        truncated,
        ...(truncated ? { nextOffset: end } : {}),
      };
    });
  }

  async write_file(a: ToolInput<"write_file">): Promise<ToolOutput<"write_file">> {
    let data: Uint8Array;
    if (a.encoding === "base64") {
      if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(a.content))
        throw CliError.usage("content is not base64", 'send text with encoding "utf-8", or valid base64');
      data = new Uint8Array(Buffer.from(a.content, "base64"));
    } else data = new TextEncoder().encode(a.content);
    this.checkWriteSize(data.byteLength, "content");
    return this.session(a.session, a.path, async (gw, t) => {
      const info = await upload(
        gw.client,
        t,
        a.path,
        (async function* () {
          yield data;
        })(),
        { mode: WRITE_MODE[a.mode], parents: a.parents },
      );
      return { session: t.run, path: info?.path || a.path, size: Number(info?.size ?? data.byteLength) };
    });
  }

  async list_files(a: ToolInput<"list_files">): Promise<ToolOutput<"list_files">> {
    return this.session(a.session, a.path, async (gw, t) => {
      const page = await gw.client.listFiles(
        {
          target: { namespace: t.namespace, run: t.run },
          path: a.path,
          limit: a.limit,
          pageToken: a.cursor ?? "",
        },
        { headers: bearer(t.token) },
      );
      return {
        session: t.run,
        path: a.path,
        entries: page.entries.map((e) => ({
          name: e.name,
          path: e.path,
          type: FILE_TYPE[e.type],
          size: Number(e.size),
          mode: `0${e.mode.toString(8)}`,
          modified: e.modifiedMicros ? new Date(Number(e.modifiedMicros / 1000n)).toISOString() : null,
          ...(e.linkTarget ? { linkTarget: e.linkTarget } : {}),
        })),
        ...(page.nextPageToken ? { nextCursor: page.nextPageToken } : {}),
      };
    });
  }

  async close_session(a: ToolInput<"close_session">): Promise<ToolOutput<"close_session">> {
    const run = await getRun(this.kube, this.namespace, a.session).catch((e) => {
      throw CliError.from(e);
    });
    if (!run.spec.mode.session)
      throw CliError.usage(
        `run "${a.session}" is not a session`,
        "close_session ends sessions made by create_session; a task ends by itself",
      );
    let requested: ToolOutput<"close_session">["requested"] = "none";
    if (!isTerminalPhase(run.status?.phase)) {
      requested = a.cancel ? "cancel" : "drain";
      await this.terminate(a.session, a.cancel ? TerminationMode.Immediate : TerminationMode.Drain);
    }
    let last = run;
    if (a.waitSeconds > 0 && !isTerminalPhase(run.status?.phase)) {
      try {
        last = await waitForRun(this.kube, this.namespace, a.session, {
          timeoutMs: a.waitSeconds * 1000,
          onUpdate: (r) => {
            last = r;
          },
        });
      } catch (e) {
        if (!(e instanceof CliError && e.exitCode === ExitCode.WaitTimeout)) throw CliError.from(e);
      }
    }
    const s = last.status;
    return {
      session: a.session,
      requested,
      phase: s?.phase ?? RunPhase.Pending,
      ended: isTerminalPhase(s?.phase),
      ...(s?.reason ? { reason: s.reason } : {}),
      ...(s?.message ? { message: s.message } : {}),
    };
  }

  async run_task(a: ToolInput<"run_task">, signal?: AbortSignal): Promise<ToolOutput<"run_task">> {
    const ns = this.namespace;
    await this.checkRuntime(a.runtime);
    const body = buildRun(
      {
        runtime: a.runtime,
        args: [],
        file: "script",
        script: a.script,
        env: Object.entries(a.env ?? {}).map(([k, v]) => `${k}=${v}`),
        ...(a.timeoutSeconds ? { timeout: `${a.timeoutSeconds}s` } : {}),
        ...(this.limits.taskTtlSeconds ? { ttl: String(this.limits.taskTtlSeconds) } : {}),
      },
      ns,
      this.deps.nowMicros(),
    );
    const started = performance.now();
    const created = await this.kube.create<Run>(path(RunResource, ns), body).catch((e) => {
      throw CliError.from(e);
    });
    const name = created.metadata.name as string;
    let last: Run = created;
    let run: Run;
    try {
      run = await this.waitFor(
        name,
        {
          timeoutMs: a.waitSeconds * 1000,
          onUpdate: (r) => {
            last = r;
          },
        },
        signal,
      );
    } catch (e) {
      if (!(e instanceof CliError && e.exitCode === ExitCode.WaitTimeout)) throw CliError.from(e);
      await this.terminate(name, TerminationMode.Immediate);
      throw new CliError(
        ExitCode.WaitTimeout,
        `task "${name}" did not end within ${a.waitSeconds}s (phase ${last.status?.phase ?? "Pending"}); it was cancelled`,
        "allow longer with waitSeconds, or run long work in a session (create_session, then exec)",
      );
    }
    const s = run.status ?? {};
    const max = this.limits.maxOutputBytes;
    const out = new HeadTail(max);
    out.push(new TextEncoder().encode(s.stdoutTail ?? ""));
    const err = new HeadTail(max);
    err.push(new TextEncoder().encode(s.stderrTail ?? ""));
    return {
      run: name,
      phase: s.phase ?? RunPhase.Pending,
      ...(s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
      ...(s.signal ? { signal: s.signal } : {}),
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.message ? { message: s.message } : {}),
      outputs: s.outputs ?? {},
      stdoutTail: out.text(),
      stderrTail: err.text(),
      stdoutTruncated: (s.stdoutTruncated ?? false) || out.truncated,
      stderrTruncated: (s.stderrTruncated ?? false) || err.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  }

  async invoke_function(a: ToolInput<"invoke_function">): Promise<ToolOutput<"invoke_function">> {
    if (a.body !== undefined && a.json !== undefined)
      throw CliError.usage("body and json exclude each other", "send text as body, or a JSON value as json");
    const body = new TextEncoder().encode(a.json !== undefined ? JSON.stringify(a.json) : (a.body ?? ""));
    this.checkWriteSize(body.byteLength, "the request body");
    const contentType = a.contentType ?? (a.json !== undefined ? "application/json" : guessContentType(body));
    const request = buildInvokeRequest(body, [
      ...Object.entries(a.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
      `content-type: ${contentType}`,
    ]);
    const target = { namespace: this.namespace, run: a.name, via: "" };
    try {
      return await this.pool.use(async (gw) => {
        target.via = gw.target.via;
        const res = await invokeFunction(gw.target, {
          namespace: this.namespace,
          run: a.name,
          ...request,
          token: gw.token,
          ...(a.timeoutSeconds ? { timeoutMs: a.timeoutSeconds * 1000 } : {}),
        });
        const max = this.limits.maxOutputBytes;
        const truncated = res.body.byteLength > max;
        const enc = encodeContent(truncated ? res.body.subarray(0, max) : res.body, truncated);
        return {
          function: a.name,
          status: res.status,
          contentType: res.contentType,
          headers: res.headers,
          body: enc.content,
          encoding: enc.encoding,
          bytes: res.body.byteLength,
          truncated,
          invocationId: res.invocationId,
          durationMs: Number(res.durationMicros) / 1000,
        };
      });
    } catch (e) {
      throw invokeError(e, target);
    }
  }

  /** A session call on the pooled gateway, its errors in krt's words naming the session (and path). */
  private async session<T>(
    run: string,
    filePath: string | undefined,
    fn: (gw: OpenGateway, t: SessionCallTarget) => Promise<T>,
  ): Promise<T> {
    let via = "";
    try {
      return await this.pool.use((gw) => {
        via = gw.target.via;
        return fn(gw, { namespace: this.namespace, run, token: gw.token });
      });
    } catch (e) {
      throw (
        sessionOwnError(e, run, filePath) ??
        sessionError(e, {
          namespace: this.namespace,
          run,
          via,
          ...(filePath !== undefined ? { path: filePath } : {}),
        })
      );
    }
  }

  /**
   * waitForRun, until the client cancels the call: then no one will use the Run, so it is
   * cancelled (which also ends the watch, as the Run reaches a terminal phase).
   */
  private async waitFor(name: string, opts: WaitOptions, signal?: AbortSignal): Promise<Run> {
    const waiting = waitForRun(this.kube, this.namespace, name, opts);
    if (!signal) return waiting;
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () =>
        reject(
          new CliError(ExitCode.Interrupted, `the client cancelled the call; run "${name}" is cancelled`),
        );
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([waiting, aborted]);
    } catch (e) {
      if (signal.aborted) {
        waiting.catch(() => {});
        await this.terminate(name, TerminationMode.Immediate).catch(() => {});
      }
      throw e;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  private checkWriteSize(bytes: number, what: string): void {
    if (bytes > this.limits.maxWriteBytes)
      throw new CliError(
        ExitCode.TooLarge,
        `${what} has ${bytes} bytes, more than the ${this.limits.maxWriteBytes} this server takes in one call`,
        "send it in parts (write_file with mode append), or start krt mcp with a larger --max-write",
      );
  }

  private async terminate(name: string, mode: (typeof TerminationMode)[keyof typeof TerminationMode]) {
    await this.kube
      .patch<Run>(path(RunResource, this.namespace, name), { spec: { termination: { mode } } }, "merge")
      .catch((e) => {
        throw CliError.from(e);
      });
  }

  /** A Run for a missing Runtime would sit Pending: say so, with the Runtimes there are. */
  private async checkRuntime(name: string): Promise<void> {
    try {
      await getRuntime(this.kube, this.namespace, name);
    } catch (e) {
      if (KubeError.is(e, 403)) return;
      if (!(e instanceof CliError && e.exitCode === ExitCode.NotFound) && !isNotFound(e))
        throw CliError.from(e);
      const names = await this.kube
        .list<{ metadata: { name: string } }>(path(RuntimeResource, this.namespace))
        .then((l) => l.items.map((r) => r.metadata.name))
        .catch(() => undefined);
      throw new CliError(
        ExitCode.NotFound,
        `runtime "${name}" not found in namespace "${this.namespace}"`,
        names === undefined
          ? `use a Runtime of namespace "${this.namespace}" (krt mcp acts in that namespace only)`
          : names.length
            ? `use one of: ${names.join(", ")}`
            : `namespace "${this.namespace}" has no Runtimes; krt mcp acts in that namespace only (its -n flag)`,
      );
    }
  }
}

/**
 * FAILED_PRECONDITION without RunNotReady is the session's own answer about a path (a directory
 * read as a file, a file listed as a directory), not a Run that cannot serve; krt's sessionError
 * would read it as the latter.
 */
function sessionOwnError(e: unknown, run: string, filePath: string | undefined): CliError | undefined {
  if (!(e instanceof ConnectError) || e.code !== Code.FailedPrecondition) return undefined;
  if (e.findDetails(RunNotReadySchema).length > 0 || e.findDetails(FailureSchema).length > 0)
    return undefined;
  const where = filePath !== undefined ? `${run}:${filePath}` : `session "${run}"`;
  return CliError.usage(
    `${where}: ${e.rawMessage}`,
    /directory/.test(e.rawMessage)
      ? "read_file takes files and list_files directories: check the path with list_files"
      : undefined,
  );
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
