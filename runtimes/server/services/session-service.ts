/**
 * SessionService: Open/Close/Status/List act on the session registry; Exec streams one command's
 * events (a caller that goes away cancels its command); background processes, and the file
 * operations, each confined to the session's workspace (sessions/workspace-path.ts). Every call
 * but Status and List names the session and attempt it serves and is fenced by it.
 */
import { closeSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  CancelOperationResponseSchema,
  CloseResponseSchema,
  type ExecRequest,
  type ExecResponse,
  ExitReason,
  ListFilesResponseSchema,
  ListProcessesResponseSchema,
  MakeDirResponseSchema,
  OpenResponseSchema,
  type ReadFileRequest,
  type ReadFileResponse,
  ReadFileResponseSchema,
  RemoveResponseSchema,
  RenameResponseSchema,
  type SessionService,
  SessionServiceListResponseSchema,
  SessionServiceStatusResponseSchema,
  SignalProcessResponseSchema,
  StartProcessResponseSchema,
  StatResponseSchema,
  WaitProcessResponseSchema,
  WriteFileResponseSchema,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { RuntimeServerError } from "../errors.ts";
import { makeDir, openForRead, readChunks, remove, rename, stat } from "../sessions/file-ops.ts";
import { listFiles } from "../sessions/list-files.ts";
import type { Session } from "../sessions/session.ts";
import { sessionError } from "../sessions/session-error.ts";
import type { SessionMetrics } from "../sessions/session-metrics.ts";
import type { SessionRegistry } from "../sessions/session-registry.ts";
import { killSignal } from "../sessions/signals.ts";
import { commandArgv } from "../sessions/spawn-command.ts";
import { ID_PATTERN } from "../sessions/uploads.ts";

export interface SessionServiceDeps {
  registry: SessionRegistry;
  draining(): boolean;
  metrics: SessionMetrics;
  /** Counts open Exec/ReadFile streams, so a drain can let the last events reach their callers. */
  streams: { open: number };
}

/** Longest WaitProcess wait. */
const MAX_WAIT_MS = 60 * 60_000;

export function sessionService(deps: SessionServiceDeps): ServiceImpl<typeof SessionService> {
  const { registry, metrics } = deps;

  /** Runs one unary call, counting its result by operation and code. */
  async function call<T>(op: string, fn: () => T | Promise<T>): Promise<T> {
    try {
      const result = await fn();
      metrics.operation(op, "OK");
      return result;
    } catch (error) {
      const refusal = RuntimeServerError.toConnect(error);
      metrics.operation(op, Code[refusal.code]);
      throw refusal;
    }
  }

  function cwdOf(session: Session, workingDir: string): string | { error: string } {
    try {
      const { fd, real } = session.workspace.openDirectory(workingDir);
      closeSync(fd);
      return real === "" ? session.workspace.root : `${session.workspace.root}/${real}`;
    } catch (error) {
      const ce = RuntimeServerError.toConnect(error);
      if (ce.code === Code.PermissionDenied || ce.code === Code.InvalidArgument) throw ce;
      return { error: `working directory ${JSON.stringify(workingDir)}: ${ce.rawMessage}` };
    }
  }

  function checkId(what: string, id: string): void {
    if (!ID_PATTERN.test(id))
      throw sessionError(Code.InvalidArgument, `${what} must match ${ID_PATTERN.source}`);
  }

  function checkEnv(env: Record<string, string>): void {
    for (const [key, value] of Object.entries(env)) {
      if (key === "" || key.includes("=") || key.includes("\0") || value.includes("\0")) {
        throw sessionError(
          Code.InvalidArgument,
          `env ${JSON.stringify(key)}: names must be non-empty without "=", and no NUL bytes`,
        );
      }
    }
  }

  return {
    open(req) {
      return call("Open", async () => {
        if (deps.draining()) {
          throw sessionError(
            Code.Unavailable,
            "the runtime server is shutting down and opens no new sessions",
          );
        }
        const { session, created } = await registry.open(req);
        return create(OpenResponseSchema, { info: session.toProto(), created });
      });
    },

    close(req) {
      return call("Close", async () => {
        const session = await registry.close(req.session, req.mode, req.deadlineMs, req.removeWorkspace);
        return create(CloseResponseSchema, { info: session.toProto() });
      });
    },

    status(req) {
      return call("Status", () =>
        create(SessionServiceStatusResponseSchema, { info: registry.find(req.runUid).toProto() }),
      );
    },

    list() {
      return call("List", () =>
        create(SessionServiceListResponseSchema, { sessions: registry.list().map((s) => s.toProto()) }),
      );
    },

    async *exec(req: ExecRequest, ctx: HandlerContext): AsyncGenerator<ExecResponse> {
      let operation: ReturnType<Session["exec"]>;
      try {
        const session = registry.get(req.session);
        session.assertOpen();
        checkId("operation_id", req.operationId);
        checkEnv(req.env);
        const argv = commandArgv(req.command, registry.shell);
        const cwd = cwdOf(session, req.workingDir);
        operation = session.exec({
          operationId: req.operationId,
          argv,
          cwd: typeof cwd === "string" ? cwd : session.workspace.root,
          startError: typeof cwd === "string" ? undefined : cwd.error,
          env: session.commandEnv(req.env),
          timeoutMs: req.timeoutMs,
          stdin: req.stdin,
        });
      } catch (error) {
        const refusal = RuntimeServerError.toConnect(error);
        metrics.operation("Exec", Code[refusal.code]);
        throw refusal;
      }
      metrics.operation("Exec", "OK");
      const onAbort = () => operation.stop(ExitReason.CANCELLED, "the caller went away", registry.graceMs);
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      deps.streams.open++;
      try {
        yield* operation.events.iterate(ctx.signal);
      } finally {
        deps.streams.open--;
        ctx.signal.removeEventListener("abort", onAbort);
        if (operation.running) onAbort();
      }
      metrics.execEnded(ExitReason[(await operation.done).reason] ?? "UNSPECIFIED");
    },

    cancelOperation(req) {
      return call("CancelOperation", () =>
        create(CancelOperationResponseSchema, {
          cancelled: registry.get(req.session).cancelOperation(req.operationId),
        }),
      );
    },

    startProcess(req) {
      return call("StartProcess", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        checkId("process_id", req.processId);
        checkEnv(req.env);
        const argv = commandArgv(req.command, registry.shell);
        const cwd = cwdOf(session, req.workingDir);
        const proc = session.startProcess(req.processId, {
          argv,
          cwd: typeof cwd === "string" ? cwd : session.workspace.root,
          startError: typeof cwd === "string" ? undefined : cwd.error,
          env: session.commandEnv(req.env),
        });
        return create(StartProcessResponseSchema, { process: proc.toProto() });
      });
    },

    signalProcess(req) {
      return call("SignalProcess", () => {
        const proc = registry.get(req.session).process(req.processId);
        proc.kill(killSignal(req.signal));
        return create(SignalProcessResponseSchema, { process: proc.toProto() });
      });
    },

    waitProcess(req, ctx) {
      return call("WaitProcess", async () => {
        const proc = registry.get(req.session).process(req.processId);
        if (proc.running && req.timeoutMs > 0) {
          const aborted = new Promise<void>((resolve) =>
            ctx.signal.addEventListener("abort", () => resolve(), { once: true }),
          );
          let timer: ReturnType<typeof setTimeout> | undefined;
          const timeout = new Promise<void>((resolve) => {
            timer = setTimeout(resolve, Math.min(req.timeoutMs, MAX_WAIT_MS));
          });
          await Promise.race([proc.exited, timeout, aborted]);
          clearTimeout(timer);
        }
        return create(WaitProcessResponseSchema, { process: proc.toProto() });
      });
    },

    listProcesses(req) {
      return call("ListProcesses", () =>
        create(ListProcessesResponseSchema, {
          processes: registry
            .get(req.session)
            .listProcesses()
            .map((p) => p.toProto()),
        }),
      );
    },

    async *readFile(req: ReadFileRequest, ctx: HandlerContext): AsyncGenerator<ReadFileResponse> {
      let file: ReturnType<typeof openForRead>;
      try {
        const session = registry.get(req.session);
        session.assertOpen();
        file = openForRead(session.workspace, req.path);
      } catch (error) {
        const refusal = RuntimeServerError.toConnect(error);
        metrics.operation("ReadFile", Code[refusal.code]);
        throw refusal;
      }
      metrics.operation("ReadFile", "OK");
      deps.streams.open++;
      try {
        let first = true;
        for await (const data of readChunks(file, Number(req.offset), Number(req.length))) {
          if (ctx.signal.aborted) return;
          yield create(ReadFileResponseSchema, first ? { info: file.info, data } : { data });
          first = false;
        }
        if (first) yield create(ReadFileResponseSchema, { info: file.info });
      } finally {
        deps.streams.open--;
      }
    },

    writeFile(req) {
      return call("WriteFile", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        const result = session.uploads.write(req);
        return create(WriteFileResponseSchema, { received: BigInt(result.received), info: result.info });
      });
    },

    stat(req) {
      return call("Stat", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        return create(StatResponseSchema, { info: stat(session.workspace, req.path) });
      });
    },

    makeDir(req) {
      return call("MakeDir", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        return create(MakeDirResponseSchema, {
          info: makeDir(session.workspace, req.path, req.parents, req.mode),
        });
      });
    },

    remove(req) {
      return call("Remove", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        return create(RemoveResponseSchema, { removed: remove(session.workspace, req.path, req.recursive) });
      });
    },

    rename(req) {
      return call("Rename", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        return create(RenameResponseSchema, {
          info: rename(session.workspace, req.from, req.to, req.overwrite),
        });
      });
    },

    listFiles(req) {
      return call("ListFiles", () => {
        const session = registry.get(req.session);
        session.assertOpen();
        const page = listFiles(
          {
            workspace: session.workspace,
            session: session.spec.runUid,
            tokens: registry.tokens,
            listings: session.listings,
          },
          req.path,
          req.limit,
          req.pageToken,
        );
        return create(ListFilesResponseSchema, page);
      });
    },
  };
}
