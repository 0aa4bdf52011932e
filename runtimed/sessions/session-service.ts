/**
 * `kruntimes.gateway.v1.SessionService` on runtimed's dataplane port: the gateway forwards the
 * public calls unchanged. Each call: authenticate (the same cached TokenReview as functions), the
 * fence from headers (`x-kruntimes-run-uid`, `x-kruntimes-pod-uid`, `x-kruntimes-attempt`;
 * mismatch → FAILED_PRECONDITION + RouteFailure), then:
 * - mutations (Exec, StartProcess, SignalProcess, WriteFile, MakeDir, Remove, Rename) wait their
 *   turn in the session's FIFO queue (mutation-queue.ts) and run one at a time; the operation
 *   timeout (asked, else the Run's default, capped by its maximum) counts the queue wait;
 * - reads (ReadFile, Stat, ListFiles, ListProcesses, WaitProcess) go straight to the Runtime
 *   Server and never wait behind a mutation;
 * - Exec streams the server's events to the caller as they come, each with the operation ID
 *   runtimed generated (an event-less ExecResponse carrying only the ID first, when the Exec has
 *   to wait in the queue, so a queued Exec can be cancelled);
 * - one audit record per operation (who: `x-kruntimes-caller`; what; bounded arguments; result;
 *   duration; operation ID) and the command's output as records per line with `operation`.
 * The Runtime Server's own errors pass through unchanged.
 */
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { RouteFailure_Reason } from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import type { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import type { Command, FileInfo } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { ExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { fromServer } from "../dataplane/dataplane-server.ts";
import { checkFence, refuse } from "../dataplane/fence.ts";
import type { DataplaneAuth } from "../dataplane/token-auth.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import { LineSplitter } from "./line-splitter.ts";
import { operationTimeoutMs } from "./session-limits.ts";
import type { OperationKind, SessionMetrics } from "./session-metrics.ts";
import type { Session, SessionTable } from "./session-table.ts";

export interface SessionServiceDeps {
  podUID: string;
  table: SessionTable;
  sessions: RuntimeServerClients["sessions"];
  auth: DataplaneAuth;
  metrics: SessionMetrics;
  draining(): boolean;
}

export const FENCE_HEADERS = {
  runUID: "x-kruntimes-run-uid",
  podUID: "x-kruntimes-pod-uid",
  attempt: "x-kruntimes-attempt",
  caller: "x-kruntimes-caller",
} as const;

const ARG_MAX = 256;
const ARGV_MAX = 16;

/** A path or argument for the audit record: at most ARG_MAX characters. */
export function bounded(s: string): string {
  return s.length <= ARG_MAX ? s : `${s.slice(0, ARG_MAX)}…(${s.length} chars)`;
}

export function commandForAudit(c: Command | undefined): Record<string, unknown> {
  const p = c?.program;
  if (p?.case === "shell") return { shell: bounded(p.value) };
  if (p?.case === "argv") {
    const args = p.value.args;
    return {
      argv: args.slice(0, ARGV_MAX).map(bounded),
      ...(args.length > ARGV_MAX ? { argc: args.length } : {}),
    };
  }
  return {};
}

let seq = 0;
const idPrefix = `${Date.now().toString(36)}-${Math.floor(Math.random() * 0xffffff).toString(36)}`;
/** Operation IDs: unique per runtimed process, [A-Za-z0-9._-]. */
export function newOperationId(): string {
  seq = (seq + 1) % Number.MAX_SAFE_INTEGER;
  return `op-${idPrefix}-${seq.toString(36)}`;
}

function resultOf(e: unknown): string {
  return Code[ConnectError.from(e).code] ?? "Unknown";
}

/** Handler bodies share: auth, fence, the refusal of an ending session, activity and audit. */
function frame(d: SessionServiceDeps) {
  async function enter(ctx: HandlerContext): Promise<{ s: Session; caller: string }> {
    await d.auth.check(ctx.requestHeader.get("authorization"));
    const h = ctx.requestHeader;
    const attempt = Number(h.get(FENCE_HEADERS.attempt) ?? "");
    const s = checkFence(
      {
        $typeName: "kruntimes.dataplane.v1.RouteFence",
        namespace: "",
        runName: "",
        runUid: h.get(FENCE_HEADERS.runUID) ?? "",
        podUid: h.get(FENCE_HEADERS.podUID) ?? "",
        attempt: Number.isInteger(attempt) ? attempt : -1,
      },
      { podUID: d.podUID, table: d.table, draining: d.draining() },
    );
    if (s instanceof ConnectError) throw s;
    if (s.refusing) {
      if (s.refusing.startsWith("lost:"))
        throw refuse(s.refusing.slice(5), RouteFailure_Reason.NOT_SERVED, d.podUID, s.attempt);
      throw new ConnectError(s.refusing, Code.FailedPrecondition);
    }
    return { s, caller: h.get(FENCE_HEADERS.caller) ?? "" };
  }

  function audit(
    s: Session | undefined,
    kind: OperationKind,
    caller: string,
    t0: number,
    result: string,
    fields: Record<string, unknown>,
  ): void {
    const ms = performance.now() - t0;
    d.metrics.operations.inc({ kind, result });
    d.metrics.operationDuration.observe({ kind }, ms / 1000);
    s?.log.info(
      { audit: true, caller, op: kind, result, durationMs: Math.round(ms * 1000) / 1000, ...fields },
      "session operation",
    );
  }

  /** A read: straight to the server. */
  async function read<T>(
    kind: OperationKind,
    ctx: HandlerContext,
    args: Record<string, unknown>,
    call: (s: Session) => Promise<T>,
  ): Promise<T> {
    const t0 = performance.now();
    let s: Session | undefined;
    let caller = "";
    let result = "ok";
    try {
      ({ s, caller } = await enter(ctx));
      s.begin();
      try {
        return await call(s).catch((e) => {
          throw fromServer(e);
        });
      } finally {
        s.end();
      }
    } catch (e) {
      result = resultOf(e);
      throw e;
    } finally {
      audit(s, kind, caller, t0, result, args);
    }
  }

  /** A mutation: its turn in the session's queue, then the server, bounded by the operation timeout. */
  async function mutate<T>(
    kind: OperationKind,
    ctx: HandlerContext,
    args: Record<string, unknown>,
    call: (s: Session, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const t0 = performance.now();
    const operation = newOperationId();
    let s: Session | undefined;
    let caller = "";
    let result = "ok";
    try {
      ({ s, caller } = await enter(ctx));
      const session = s;
      session.begin();
      try {
        const limit = operationTimeoutMs(session.bounds, 0);
        const turn = await session.queue.enter(operation, limit, ctx.signal);
        const stop = new AbortController();
        turn.onCancel(() =>
          stop.abort(new ConnectError(`operation ${operation} was cancelled`, Code.Canceled)),
        );
        const timer = setTimeout(
          () =>
            stop.abort(new ConnectError(`the operation timeout (${limit} ms) passed`, Code.DeadlineExceeded)),
          turn.remainingMs,
        );
        try {
          return await call(session, AbortSignal.any([stop.signal, ctx.signal])).catch((e) => {
            if (stop.signal.aborted) throw ConnectError.from(stop.signal.reason);
            throw fromServer(e);
          });
        } finally {
          clearTimeout(timer);
          turn.done();
        }
      } finally {
        session.end();
      }
    } catch (e) {
      result = resultOf(e);
      throw e;
    } finally {
      audit(s, kind, caller, t0, result, { operation, ...args });
    }
  }

  return { enter, audit, read, mutate };
}

const info = (r: { info?: FileInfo }) => (r.info ? { info: r.info } : {});

export function sessionServiceImpl(d: SessionServiceDeps): ServiceImpl<typeof SessionService> {
  const { enter, audit, read, mutate } = frame(d);
  const server = d.sessions;
  return {
    async *exec(req, ctx) {
      const t0 = performance.now();
      const operation = newOperationId();
      let s: Session | undefined;
      let caller = "";
      let result = "ok";
      let exit: Record<string, unknown> = {};
      const args = { ...commandForAudit(req.command), workingDir: bounded(req.workingDir) };
      try {
        ({ s, caller } = await enter(ctx));
        const session = s;
        session.begin();
        try {
          const limit = operationTimeoutMs(session.bounds, req.timeoutMs);
          if (session.queue.busy) yield { operationId: operation };
          const turn = await session.queue.enter(operation, limit, ctx.signal);
          const cancelOnServer = () =>
            void server.cancelOperation({ session: session.ref, operationId: operation }).catch(() => {});
          turn.onCancel(cancelOnServer);
          ctx.signal.addEventListener("abort", cancelOnServer, { once: true });
          const lines = {
            stdout: new LineSplitter((line) =>
              session.log.info({ operation, stream: "stdout", line }, "output"),
            ),
            stderr: new LineSplitter((line) =>
              session.log.info({ operation, stream: "stderr", line }, "output"),
            ),
          };
          try {
            const stream = server.exec(
              {
                session: session.ref,
                operationId: operation,
                ...(req.command ? { command: req.command } : {}),
                env: req.env,
                workingDir: req.workingDir,
                timeoutMs: turn.remainingMs,
                stdin: req.stdin,
              },
              { signal: ctx.signal },
            );
            for await (const ev of stream) {
              const e = ev.event;
              if (e.case === "output")
                (e.value.stream === "stderr" ? lines.stderr : lines.stdout).push(e.value.data);
              else if (e.case === "exited") {
                lines.stdout.flush();
                lines.stderr.flush();
                exit = {
                  exit: ExitReason[e.value.reason] ?? e.value.reason,
                  exitCode: e.value.exitCode,
                  ...(e.value.signal ? { signal: e.value.signal } : {}),
                };
              }
              yield { operationId: operation, event: e };
            }
          } catch (e) {
            throw fromServer(e);
          } finally {
            lines.stdout.flush();
            lines.stderr.flush();
            ctx.signal.removeEventListener("abort", cancelOnServer);
            turn.done();
          }
        } finally {
          session.end();
        }
      } catch (e) {
        result = resultOf(e);
        throw e;
      } finally {
        audit(s, "exec", caller, t0, result, { operation, ...args, ...exit });
      }
    },

    async cancelOperation(req, ctx) {
      const t0 = performance.now();
      let s: Session | undefined;
      let caller = "";
      let result = "ok";
      try {
        ({ s, caller } = await enter(ctx));
        return { cancelled: s.queue.cancel(req.operationId) };
      } catch (e) {
        result = resultOf(e);
        throw e;
      } finally {
        audit(s, "cancel_operation", caller, t0, result, { operation: bounded(req.operationId) });
      }
    },

    startProcess: (req, ctx) =>
      mutate(
        "start_process",
        ctx,
        {
          processId: bounded(req.processId),
          ...commandForAudit(req.command),
          workingDir: bounded(req.workingDir),
        },
        (s, signal) =>
          server
            .startProcess(
              {
                session: s.ref,
                processId: req.processId || newOperationId().replace(/^op-/, "p-"),
                ...(req.command ? { command: req.command } : {}),
                env: req.env,
                workingDir: req.workingDir,
              },
              { signal },
            )
            .then((r) => ({ ...(r.process ? { process: r.process } : {}) })),
      ),

    signalProcess: (req, ctx) =>
      mutate(
        "signal_process",
        ctx,
        { processId: bounded(req.processId), signal: bounded(req.signal) },
        (s, signal) =>
          server
            .signalProcess({ session: s.ref, processId: req.processId, signal: req.signal }, { signal })
            .then((r) => ({ ...(r.process ? { process: r.process } : {}) })),
      ),

    waitProcess: (req, ctx) =>
      read("wait_process", ctx, { processId: bounded(req.processId), timeoutMs: req.timeoutMs }, (s) =>
        server
          .waitProcess(
            {
              session: s.ref,
              processId: req.processId,
              timeoutMs: Math.min(req.timeoutMs, s.bounds.maxOperationTimeoutMs),
            },
            { signal: ctx.signal },
          )
          .then((r) => ({ ...(r.process ? { process: r.process } : {}) })),
      ),

    listProcesses: (_req, ctx) =>
      read("list_processes", ctx, {}, (s) =>
        server
          .listProcesses({ session: s.ref }, { signal: ctx.signal })
          .then((r) => ({ processes: r.processes })),
      ),

    async *readFile(req, ctx) {
      const t0 = performance.now();
      let s: Session | undefined;
      let caller = "";
      let result = "ok";
      let bytes = 0;
      try {
        ({ s, caller } = await enter(ctx));
        s.begin();
        try {
          const stream = server.readFile(
            { session: s.ref, path: req.path, offset: req.offset, length: req.length },
            { signal: ctx.signal },
          );
          for await (const chunk of stream) {
            bytes += chunk.data.length;
            yield { ...(chunk.info ? { info: chunk.info } : {}), data: chunk.data };
          }
        } catch (e) {
          throw fromServer(e);
        } finally {
          s.end();
        }
      } catch (e) {
        result = resultOf(e);
        throw e;
      } finally {
        audit(s, "read_file", caller, t0, result, { path: bounded(req.path), offset: req.offset, bytes });
      }
    },

    writeFile: (req, ctx) =>
      mutate(
        "write_file",
        ctx,
        {
          path: bounded(req.path),
          uploadId: bounded(req.uploadId),
          offset: req.offset,
          bytes: req.data.length,
          last: req.last,
        },
        (s, signal) =>
          server
            .writeFile(
              {
                session: s.ref,
                path: req.path,
                uploadId: req.uploadId,
                offset: req.offset,
                data: req.data,
                mode: req.mode,
                fileMode: req.fileMode,
                last: req.last,
                parents: req.parents,
              },
              { signal },
            )
            .then((r) => ({ received: r.received, ...(r.info ? { info: r.info } : {}) })),
      ),

    stat: (req, ctx) =>
      read("stat", ctx, { path: bounded(req.path) }, (s) =>
        server.stat({ session: s.ref, path: req.path }, { signal: ctx.signal }).then(info),
      ),

    makeDir: (req, ctx) =>
      mutate("make_dir", ctx, { path: bounded(req.path), parents: req.parents }, (s, signal) =>
        server
          .makeDir({ session: s.ref, path: req.path, parents: req.parents, mode: req.mode }, { signal })
          .then(info),
      ),

    remove: (req, ctx) =>
      mutate("remove", ctx, { path: bounded(req.path), recursive: req.recursive }, (s, signal) =>
        server
          .remove({ session: s.ref, path: req.path, recursive: req.recursive }, { signal })
          .then((r) => ({ removed: r.removed })),
      ),

    rename: (req, ctx) =>
      mutate("rename", ctx, { from: bounded(req.from), to: bounded(req.to) }, (s, signal) =>
        server
          .rename({ session: s.ref, from: req.from, to: req.to, overwrite: req.overwrite }, { signal })
          .then(info),
      ),

    listFiles: (req, ctx) =>
      read(
        "list_files",
        ctx,
        { path: bounded(req.path), limit: req.limit, paged: req.pageToken !== "" },
        (s) =>
          server
            .listFiles(
              { session: s.ref, path: req.path, limit: req.limit, pageToken: req.pageToken },
              { signal: ctx.signal },
            )
            .then((r) => ({ entries: r.entries, nextPageToken: r.nextPageToken })),
      ),
  };
}
