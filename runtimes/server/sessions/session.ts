/**
 * Session is one open session: its confined workspace, the Exec operations running in it, its
 * background processes, its uploads in progress and its directory listings. It runs operations
 * as they arrive (runtimed orders mutations). Close (DRAIN or CANCEL) ends every process group
 * of the session before it returns; after it, every operation is refused.
 */
import { rmSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  CloseMode,
  ExitReason,
  type SessionInfo,
  SessionInfoSchema,
  SessionState,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { nowMicros } from "../clock.ts";
import type { Logger } from "../logger.ts";
import { BackgroundProcess } from "./background-process.ts";
import { DirListings } from "./dir-listing.ts";
import { ExecOperation, type ExecSpec } from "./exec-operation.ts";
import { killGroups } from "./process-groups.ts";
import { sessionError } from "./session-error.ts";
import { Uploads } from "./uploads.ts";
import type { Workspace } from "./workspace-path.ts";

export interface SessionLimitsConfig {
  /** Exec operations running at once. */
  maxOperations: number;
  /** Background processes running at once. */
  maxProcesses: number;
  /** Background process records kept (exited ones dropped oldest first beyond this). */
  maxProcessRecords: number;
  /** Uploads in progress at once. */
  maxUploads: number;
  /** Tail kept per stream of a background process. */
  tailBytes: number;
  /** SIGTERM → SIGKILL grace for cancels and DRAIN's stop of background processes. */
  graceMs: number;
  /** DRAIN's wait for running operations when the request gives none. */
  drainMs: number;
  /** How long Close waits for killed groups to disappear. */
  killWaitMs: number;
}

export interface SessionSpec {
  runUid: string;
  attempt: number;
  runName: string;
  /** Environment of every command: the server's, the session's, then KRUNTIME_*. */
  env: Record<string, string>;
  workspace: Workspace;
}

export class Session {
  state = SessionState.OPEN;
  readonly openedMicros = nowMicros();
  closedMicros = 0;
  readonly uploads: Uploads;
  readonly listings = new DirListings();
  private readonly operations = new Map<string, ExecOperation>();
  private readonly processes = new Map<string, BackgroundProcess>();
  private closing: Promise<void> | undefined;
  private cancelNow: (() => void) | undefined;

  constructor(
    readonly spec: SessionSpec,
    private readonly limits: SessionLimitsConfig,
    private readonly logger: Logger,
  ) {
    this.uploads = new Uploads(spec.workspace, limits.maxUploads);
  }

  get workspace(): Workspace {
    return this.spec.workspace;
  }

  /** Throws FAILED_PRECONDITION unless the session takes new operations. */
  assertOpen(): void {
    if (this.state !== SessionState.OPEN) {
      throw sessionError(
        Code.FailedPrecondition,
        `session ${this.spec.runUid} is ${this.state === SessionState.DRAINING ? "draining" : "closed"} and takes no new operations`,
      );
    }
  }

  /** The environment of a command: the session's, then the request's extras; KRUNTIME_* stay. */
  commandEnv(extra: Record<string, string>): Record<string, string> {
    return { ...this.spec.env, ...extra, ...kruntimeEnv(this.spec) };
  }

  exec(spec: Omit<ExecSpec, "graceMs">): ExecOperation {
    this.assertOpen();
    if (this.operations.has(spec.operationId)) {
      throw sessionError(
        Code.AlreadyExists,
        `operation ${spec.operationId} is already running in this session`,
      );
    }
    if (this.operations.size >= this.limits.maxOperations) {
      throw sessionError(
        Code.ResourceExhausted,
        `${this.limits.maxOperations} operations are already running in this session`,
      );
    }
    const operation = new ExecOperation({ ...spec, graceMs: this.limits.graceMs });
    this.operations.set(spec.operationId, operation);
    operation.start();
    void operation.done.then((result) => {
      this.operations.delete(spec.operationId);
      this.logger.info(
        {
          runUid: this.spec.runUid,
          attempt: this.spec.attempt,
          operation: spec.operationId,
          commandPid: operation.pid,
          reason: ExitReason[result.reason],
          exitCode: result.exitCode,
          signal: result.signal || undefined,
          durationMs: Math.round(result.durationMs),
        },
        "exec ended",
      );
    });
    return operation;
  }

  cancelOperation(operationId: string): boolean {
    const operation = this.operations.get(operationId);
    if (operation === undefined) return false;
    return operation.stop(ExitReason.CANCELLED, "cancelled", this.limits.graceMs);
  }

  startProcess(id: string, spec: ConstructorParameters<typeof BackgroundProcess>[1]): BackgroundProcess {
    this.assertOpen();
    if (this.processes.has(id))
      throw sessionError(Code.AlreadyExists, `process ${id} already exists in this session`);
    if (this.runningProcesses >= this.limits.maxProcesses) {
      throw sessionError(
        Code.ResourceExhausted,
        `${this.limits.maxProcesses} background processes are already running in this session`,
      );
    }
    const proc = new BackgroundProcess(id, spec, this.limits.tailBytes);
    this.processes.set(id, proc);
    this.pruneProcesses();
    void proc.exited.then(() =>
      this.logger.info(
        {
          runUid: this.spec.runUid,
          attempt: this.spec.attempt,
          process: id,
          commandPid: proc.pid,
          reason: ExitReason[proc.reason],
          exitCode: proc.exitCode,
          signal: proc.signal || undefined,
        },
        "process ended",
      ),
    );
    return proc;
  }

  process(id: string): BackgroundProcess {
    const proc = this.processes.get(id);
    if (proc === undefined) throw sessionError(Code.NotFound, `no process ${id} in this session`);
    return proc;
  }

  listProcesses(): BackgroundProcess[] {
    return [...this.processes.values()];
  }

  get runningProcesses(): number {
    let n = 0;
    for (const p of this.processes.values()) if (p.running) n++;
    return n;
  }

  toProto(): SessionInfo {
    return create(SessionInfoSchema, {
      session: { runUid: this.spec.runUid, attempt: this.spec.attempt },
      runName: this.spec.runName,
      state: this.state,
      workspace: this.spec.workspace.root,
      runningOperations: this.operations.size,
      runningProcesses: this.runningProcesses,
      openedMicros: BigInt(this.openedMicros),
      closedMicros: BigInt(this.closedMicros),
    });
  }

  /** Ends the session (idempotent; a CANCEL during a DRAIN cuts the drain short). */
  async close(mode: CloseMode, deadlineMs: number, removeWorkspace: boolean): Promise<void> {
    if (mode === CloseMode.CANCEL) this.cancelNow?.();
    this.closing ??= this.runClose(
      mode === CloseMode.CANCEL,
      deadlineMs === 0 ? this.limits.drainMs : deadlineMs,
    );
    await this.closing;
    if (removeWorkspace) rmSync(this.spec.workspace.root, { recursive: true, force: true });
  }

  private async runClose(cancel: boolean, deadlineMs: number): Promise<void> {
    const started = performance.now();
    this.state = SessionState.DRAINING;
    if (!cancel && this.operations.size > 0) {
      const cut = new Promise<void>((resolve) => {
        this.cancelNow = resolve;
      });
      const all = Promise.all([...this.operations.values()].map((op) => op.done)).then(() => undefined);
      await Promise.race([all, cut, Bun.sleep(deadlineMs)]);
      this.cancelNow = undefined;
    }
    for (const op of this.operations.values()) op.stop(ExitReason.CANCELLED, "the session closed", 0);
    const running = [...this.processes.values()].filter((p) => p.running);
    for (const p of running) p.markCancelled();
    if (!cancel && running.length > 0) {
      for (const p of running) p.kill("SIGTERM");
      await Promise.race([Promise.all(running.map((p) => p.exited)), Bun.sleep(this.limits.graceMs)]);
    }
    // Only groups still running: the id of an ended group may already belong to someone else.
    const groups = [
      ...[...this.operations.values()].filter((op) => op.running).map((op) => op.pid),
      ...[...this.processes.values()].filter((p) => p.running).map((p) => p.pid),
    ].filter((pid) => pid > 0);
    const survivors = await killGroups(groups, this.limits.killWaitMs);
    // The groups are gone: the exits are being reaped now; report them before Close returns.
    await Promise.race([
      Promise.all([...this.operations.values()].map((op) => op.done)).then(() =>
        Promise.all([...this.processes.values()].map((p) => p.exited)),
      ),
      Bun.sleep(this.limits.killWaitMs),
    ]);
    this.uploads.abandonIdle();
    this.state = SessionState.CLOSED;
    this.closedMicros = nowMicros();
    const log = { runUid: this.spec.runUid, attempt: this.spec.attempt, mode: cancel ? "CANCEL" : "DRAIN" };
    if (survivors.length > 0)
      this.logger.warn({ ...log, survivors }, "process groups still alive after close");
    this.logger.info({ ...log, durationMs: Math.round(performance.now() - started) }, "session closed");
  }

  /** Keeps at most maxProcessRecords records, dropping the oldest exited ones. */
  private pruneProcesses(): void {
    if (this.processes.size <= this.limits.maxProcessRecords) return;
    for (const [id, p] of this.processes) {
      if (this.processes.size <= this.limits.maxProcessRecords) return;
      if (!p.running) this.processes.delete(id);
    }
  }
}

function kruntimeEnv(spec: SessionSpec): Record<string, string> {
  return {
    KRUNTIME_RUN_UID: spec.runUid,
    KRUNTIME_RUN_NAME: spec.runName,
    KRUNTIME_ATTEMPT: String(spec.attempt),
    KRUNTIME_WORKDIR: spec.workspace.root,
  };
}
