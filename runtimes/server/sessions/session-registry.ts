/**
 * SessionRegistry holds the sessions of this server, one per run_uid, fenced by attempt like
 * function registrations: Open of the same attempt again returns the existing session, an older
 * attempt is refused FAILED_PRECONDITION, a newer one cancels the older session and opens a new,
 * empty workspace. Closed sessions stay visible to Status and List for `retainFinishedMs` (at
 * most `retainMaxFinished`, oldest dropped first). Abandoned uploads are swept periodically.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import {
  CloseMode,
  type OpenRequest,
  type SessionRef,
  SessionState,
} from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import type { Logger } from "../logger.ts";
import type { ServerOptions } from "../options.ts";
import { PageTokens } from "./page-token.ts";
import { Session, type SessionLimitsConfig } from "./session.ts";
import { sessionError } from "./session-error.ts";
import { Workspace } from "./workspace-path.ts";

const RUN_UID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** An upload with no chunk for this long is abandoned (its temporary file removed). */
export const UPLOAD_IDLE_MS = 10 * 60_000;
const SWEEP_EVERY_MS = 30_000;

export interface SessionRegistryConfig {
  options: ServerOptions;
  logger: Logger;
  limits?: Partial<SessionLimitsConfig>;
  uploadIdleMs?: number;
}

export class SessionRegistry {
  readonly tokens = new PageTokens(randomBytes(32));
  readonly shell: string;
  private readonly sessions = new Map<string, Session>();
  private readonly closedOrder: Session[] = [];
  private readonly limits: SessionLimitsConfig;
  private readonly sweeper: ReturnType<typeof setInterval>;
  private readonly logger: Logger;
  private readonly options: ServerOptions;
  private readonly uploadIdleMs: number;

  constructor(config: SessionRegistryConfig) {
    const { options } = config;
    this.options = options;
    this.logger = config.logger;
    this.uploadIdleMs = config.uploadIdleMs ?? UPLOAD_IDLE_MS;
    // The runtime's shell: bash (the bash runtime's interpreter, or /bin/bash), else sh.
    this.shell =
      options.language === "bash" ? options.interpreter : existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
    this.limits = {
      maxOperations: 64,
      maxProcesses: 64,
      maxProcessRecords: 256,
      maxUploads: 64,
      tailBytes: options.limits.defaultTailBytes,
      graceMs: options.defaultGraceMs,
      drainMs: options.drainTimeoutMs,
      killWaitMs: 10_000,
      ...config.limits,
    };
    this.sweeper = setInterval(() => this.sweepUploads(), SWEEP_EVERY_MS);
    this.sweeper.unref?.();
  }

  /** SIGTERM → SIGKILL grace of cancels. */
  get graceMs(): number {
    return this.limits.graceMs;
  }

  async open(req: OpenRequest): Promise<{ session: Session; created: boolean }> {
    const ref = req.session;
    if (ref === undefined || !RUN_UID_PATTERN.test(ref.runUid)) {
      throw sessionError(Code.InvalidArgument, `session.run_uid must match ${RUN_UID_PATTERN.source}`);
    }
    for (const [key, value] of Object.entries(req.env)) {
      if (key === "" || key.includes("=") || key.includes("\0") || value.includes("\0")) {
        throw sessionError(
          Code.InvalidArgument,
          `env ${JSON.stringify(key)}: names must be non-empty without "=", and no NUL bytes`,
        );
      }
    }
    const existing = this.sessions.get(ref.runUid);
    if (existing !== undefined) {
      if (ref.attempt === existing.spec.attempt) {
        if (existing.state !== SessionState.OPEN) {
          throw sessionError(
            Code.FailedPrecondition,
            `session ${ref.runUid} attempt ${ref.attempt} was closed`,
          );
        }
        return { session: existing, created: false };
      }
      if (ref.attempt < existing.spec.attempt) throw stale(ref.attempt, existing.spec.attempt);
      await existing.close(CloseMode.CANCEL, 0, false);
      this.forget(existing);
      const now = this.sessions.get(ref.runUid);
      if (now !== undefined) return this.open(req);
    }
    const workspace = this.prepareWorkspace(
      req.workspaceDir === "" ? `${ref.runUid}/session` : req.workspaceDir,
    );
    const session = new Session(
      {
        runUid: ref.runUid,
        attempt: ref.attempt,
        runName: req.runName,
        env: { ...this.options.baseEnv, ...req.env },
        workspace,
      },
      this.limits,
      this.logger,
    );
    this.sessions.set(ref.runUid, session);
    this.logger.info(
      { runUid: ref.runUid, attempt: ref.attempt, run: req.runName, workspace: workspace.root },
      "session opened",
    );
    return { session, created: true };
  }

  /** The open session a call names; NOT_FOUND when unknown, FAILED_PRECONDITION for another attempt. */
  get(ref: SessionRef | undefined): Session {
    const session = this.find(ref?.runUid ?? "");
    if (ref!.attempt !== session.spec.attempt) {
      throw ref!.attempt < session.spec.attempt
        ? stale(ref!.attempt, session.spec.attempt)
        : sessionError(
            Code.FailedPrecondition,
            `attempt ${ref!.attempt} of session ${ref!.runUid} is not open (attempt ${session.spec.attempt} is)`,
          );
    }
    return session;
  }

  find(runUid: string): Session {
    const session = this.sessions.get(runUid);
    if (session === undefined)
      throw sessionError(Code.NotFound, `no session for run ${JSON.stringify(runUid)}`);
    return session;
  }

  async close(
    ref: SessionRef | undefined,
    mode: CloseMode,
    deadlineMs: number,
    removeWorkspace: boolean,
  ): Promise<Session> {
    const session = this.get(ref);
    const wasClosed = session.state === SessionState.CLOSED;
    await session.close(mode, deadlineMs, removeWorkspace);
    if (!wasClosed && !this.closedOrder.includes(session)) this.onClosed(session);
    return session;
  }

  list(): Session[] {
    return [...this.sessions.values()];
  }

  get openCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.state !== SessionState.CLOSED) n++;
    return n;
  }

  /** The server stops: every session is cancelled (all process groups killed). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all(this.list().map((s) => s.close(CloseMode.CANCEL, 0, false)));
  }

  private prepareWorkspace(dir: string): Workspace {
    const parts = dir.split("/").filter((p) => p !== "" && p !== ".");
    if (dir.startsWith("/") || dir.includes("\0") || parts.includes("..") || parts.length === 0) {
      throw sessionError(
        Code.InvalidArgument,
        `workspace_dir must be a relative path without "..", got ${JSON.stringify(dir)}`,
      );
    }
    mkdirSync(this.options.workspaceRoot, { recursive: true });
    const root = realpathSync(this.options.workspaceRoot);
    const path = join(root, ...parts);
    // The workspace starts empty: what an earlier attempt or server left there goes.
    rmSync(path, { recursive: true, force: true });
    mkdirSync(path, { recursive: true, mode: 0o755 });
    const real = realpathSync(path);
    if (!real.startsWith(`${root}/`)) {
      throw sessionError(
        Code.InvalidArgument,
        `workspace_dir ${JSON.stringify(dir)} resolves outside the workspace root`,
      );
    }
    return new Workspace(real);
  }

  private sweepUploads(): void {
    const before = Date.now() - this.uploadIdleMs;
    for (const session of this.sessions.values()) {
      const n = session.uploads.abandonIdle(before);
      if (n > 0) this.logger.info({ runUid: session.spec.runUid, uploads: n }, "abandoned idle uploads");
    }
  }

  private onClosed(session: Session): void {
    this.closedOrder.push(session);
    setTimeout(() => this.forget(session), this.options.retainFinishedMs).unref?.();
    while (this.closedOrder.length > this.options.retainMaxFinished) this.forget(this.closedOrder[0]!);
  }

  private forget(session: Session): void {
    const at = this.closedOrder.indexOf(session);
    if (at !== -1) this.closedOrder.splice(at, 1);
    if (this.sessions.get(session.spec.runUid) === session) this.sessions.delete(session.spec.runUid);
  }
}

function stale(attempt: number, open: number) {
  return sessionError(
    Code.FailedPrecondition,
    `attempt ${attempt} is older than the session's attempt ${open}`,
  );
}
