/**
 * One session Run on this pod, from its assignment to its end. Open the session on the Runtime
 * Server (workspace `<root>/<runUID>/session`, the finalizer patch in flight at the same time),
 * then ONE fenced status write straight to Ready. runtimed owns the session's end:
 * - `termination.mode: Drain`, `idleTimeout` (no operation for that long; runtimed sees every
 *   operation) or `spec.timeout` (the whole lifetime) → a Finalizing write (new operations are
 *   refused, accepted ones finish), Close(DRAIN, the close deadline) stops the processes, the
 *   `$KRUNTIME_ARTIFACTS_DIR` of the workspace is exported when the Runtime has an artifact store,
 *   then Succeeded (Drained / IdleTimeout) or Timeout; invalid artifacts → Failed.
 * - `termination.mode: Immediate` → the active operation is killed, the queue cancelled,
 *   Close(CANCEL) → Cancelled.
 * - the Runtime Server lost the session (it restarted: workspace and processes are gone) →
 *   Failed, never silently re-opened.
 * - runtimed restarting → the session stays open on the server and the next runtimed re-adopts
 *   it from the server's List without a status write.
 * The pod is spent afterwards: the session's terminal status is the mark the controller acts on
 * (it deletes the pod; the Deployment refills the pool).
 */

import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ArtifactRef,
  durationOr,
  isTerminalPhase,
  Reason,
  type Run,
  RunPhase,
  type RunStatus,
  TerminationMode,
} from "@kruntimes/api";
import {
  CloseMode,
  type SessionInfo,
  SessionState,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import type { KubeClient } from "@kruntimes/kube";
import { ARTIFACTS_ENV, type RunArtifacts } from "../artifacts/run-artifacts.ts";
import { nowMicros } from "../clock.ts";
import { addFinalizerPatch, patchFinalizers, removeFinalizerPatch } from "../functions/finalizer.ts";
import { modeNotSupported } from "../functions/function-outcome.ts";
import { podFacts } from "../functions/function-status.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { RuntimedOptions } from "../options.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import type { Outcome } from "../status/outcome.ts";
import { fencedStatusPatch, type JsonPatchOp } from "../status/run-status.ts";
import type { StatusWriter } from "../status/status-writer.ts";
import type { QueueBudget } from "./mutation-queue.ts";
import { sessionBounds } from "./session-limits.ts";
import type { SessionMetrics } from "./session-metrics.ts";
import { finalizingStatus, sessionReadyStatus, sessionTerminalStatus } from "./session-status.ts";
import { Session, type SessionTable } from "./session-table.ts";

export interface SessionSupervisorDeps {
  o: RuntimedOptions;
  sessions: RuntimeServerClients["sessions"];
  client: KubeClient;
  writer: StatusWriter;
  metrics: Metrics;
  sessionMetrics: SessionMetrics;
  log: Logger;
  table: SessionTable;
  budget: QueueBudget;
  artifacts?: RunArtifacts;
  draining(): boolean;
  done(sup: SessionSupervisor): void;
  /** How often the Runtime Server is asked whether it still holds the session. */
  checkEveryMs?: number;
}

export type SessionStartKind = "new" | "adopt";

/** What ends serving. */
type Interrupt = "drain" | "idle" | "timeout" | "cancel" | "delete" | "lost" | "abandon" | "detach";

/** The directory of the workspace exported as artifacts. */
export const SESSION_ARTIFACTS_DIR = ".artifacts";
/** Where the Runtime Server keeps session workspaces, under the shared workspace volume. */
const SERVER_SESSION_ROOT = "runs";

const msText = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

export class SessionSupervisor {
  private readonly attempt: number;
  private interrupt: Interrupt | undefined;
  private lostWhy = "";
  private wake: (() => void) | undefined;
  private writingTerminal = false;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private session: Session | undefined;
  private readonly log: Logger;

  constructor(
    private run: Run,
    private readonly d: SessionSupervisorDeps,
    private readonly kind: SessionStartKind,
    /** The server's session of this Run found at start-up (re-adopt without Open). */
    private readonly known?: SessionInfo,
  ) {
    this.attempt = run.status?.attempt ?? 1;
    this.log = d.log.child({
      run: run.metadata.name,
      runUID: run.metadata.uid,
      namespace: run.metadata.namespace,
      attempt: this.attempt,
    });
  }

  get uid(): string {
    return this.run.metadata.uid ?? "";
  }
  get isAbandoned(): boolean {
    return this.interrupt === "abandon";
  }
  get currentAttempt(): number {
    return this.attempt;
  }

  start(): void {
    this.d.metrics.inFlight.inc();
    this.main()
      .catch((e) => this.log.error({ err: e }, "session supervisor failed"))
      .finally(() => {
        for (const t of this.timers) clearTimeout(t);
        this.d.table.withdraw(this.uid, this.attempt);
        this.d.metrics.inFlight.dec();
        this.d.done(this);
      });
  }

  /** runtimed is shutting down: leave the session open on the server (a restart re-adopts it). */
  drain(): void {
    this.raise("detach");
  }

  abandon(why: string): void {
    if (this.interrupt === "abandon" || this.writingTerminal) return;
    this.log.info({ why }, "no longer serving this session here");
    this.raise("abandon", true);
  }

  observe(run: Run): void {
    const s = run.status;
    if ((s?.attempt ?? 0) !== this.attempt || s?.assignment?.podUID !== this.d.o.pod.uid) {
      this.abandon(`the Run moved on (attempt ${s?.attempt} on pod ${s?.assignment?.pod ?? "none"})`);
      return;
    }
    this.run = run;
    if (isTerminalPhase(s?.phase) && !this.writingTerminal) {
      this.abandon(`the Run was ended by someone else (${s?.phase})`);
      return;
    }
    if (run.metadata.deletionTimestamp) this.raise("delete");
    else if (run.spec.termination?.mode === TerminationMode.Immediate) this.raise("cancel", true);
    else if (run.spec.termination?.mode === TerminationMode.Drain) this.raise("drain");
  }

  /** Cancel-like interrupts override a drain in progress (Immediate after Drain). */
  private raise(i: Interrupt, override = false): void {
    if (this.interrupt && !(override && this.interrupt !== "abandon" && this.interrupt !== "cancel")) return;
    this.interrupt = i;
    if (i === "cancel" || i === "abandon") {
      const s = this.session;
      if (s) {
        s.refusing = i === "cancel" ? "the session was cancelled" : "the session is not served here any more";
        s.queue.close("cancel", s.refusing);
        void this.d.sessions
          .close({ session: s.ref, mode: CloseMode.CANCEL }, { timeoutMs: 10_000 })
          .catch(() => {});
      }
    }
    this.wake?.();
  }

  private sleepUntilInterrupt(): Promise<void> {
    if (this.interrupt) return Promise.resolve();
    return new Promise((r) => (this.wake = r));
  }

  private async main(): Promise<void> {
    const phase = this.run.status?.phase;
    if (phase === RunPhase.Finalizing && this.kind === "adopt") {
      // runtimed restarted mid-finalize: finish it (the Drain/idle/timeout reason is in status).
      const info = this.known;
      if (!info || info.session?.attempt !== this.attempt)
        return this.fail(this.lostMessage("during Finalizing"));
      this.session = this.makeSession();
      this.session.refusing = "the session is finalizing";
      this.session.queue.close("drain", this.session.refusing);
      return this.finalize(this.resumeIntent());
    }
    const startedMicros = this.run.status?.timing?.startedMicros ?? nowMicros();
    let info: SessionInfo | undefined;
    if (this.kind === "adopt") {
      if (this.known?.session?.attempt !== this.attempt || this.known.state !== SessionState.OPEN)
        return this.fail(this.lostMessage("while runtimed was restarting"));
      info = this.known;
      this.log.info("re-adopted the session the Runtime Server kept");
      this.d.sessionMetrics.sessions.inc({ result: "readopted" });
    } else {
      const finalizer = this.ensureFinalizer();
      info = await this.open();
      if (!(await finalizer)) {
        this.abandon("the Run is gone");
        if (info) await this.closeOnServer(CloseMode.CANCEL);
        return;
      }
      if (!info || this.interrupt === "cancel" || this.interrupt === "delete") {
        if (info) await this.closeOnServer(CloseMode.CANCEL);
        if (this.interrupt === "cancel") return this.finish(this.cancelled(), []);
        if (this.interrupt === "delete") return this.releaseFinalizer();
        return;
      }
    }
    const session = this.makeSession();
    this.session = session;
    this.d.table.serve(session);
    if (this.run.status?.phase !== RunPhase.Ready) {
      if (!(await this.writeReady(info, startedMicros))) return this.closeOnServer(CloseMode.CANCEL);
    }
    this.armTimers(session);
    await this.watch(session);
    await this.end();
  }

  private makeSession(): Session {
    return new Session(
      this.uid,
      this.run.metadata.namespace ?? "",
      this.run.metadata.name ?? "",
      this.attempt,
      sessionBounds(this.run),
      this.d.budget,
      this.log,
    );
  }

  private lostMessage(when: string): string {
    return `the Runtime Server no longer holds the session (it restarted ${when}): the workspace and its processes are lost; a session is never re-opened`;
  }

  private resumeIntent(): Interrupt {
    const r = this.run.status?.reason;
    if (r === Reason.IdleTimeout) return "idle";
    if (r === Reason.Timeout) return "timeout";
    return "drain";
  }

  /** Open on the server (idempotent for the same attempt), waiting out a restarting server. */
  private async open(): Promise<SessionInfo | undefined> {
    // spec.env is the base environment of every operation, as for a task's attempt.
    const env: Record<string, string> = {};
    for (const e of this.run.spec.env ?? []) env[e.name] = e.value;
    const workspaceDir = `${this.uid}/session`;
    // The Runtime Server's session root is `<workspace>/runs` (runtimes/server/options.ts); the
    // export reads the directory the server reports (see artifactsDir).
    if (this.d.artifacts)
      env[ARTIFACTS_ENV] = join(this.d.o.workspace, SERVER_SESSION_ROOT, workspaceDir, SESSION_ARTIFACTS_DIR);
    let delay = 50;
    for (;;) {
      if (this.interrupt) return undefined;
      try {
        const res = await this.d.sessions.open({
          session: { runUid: this.uid, attempt: this.attempt },
          runName: this.run.metadata.name ?? "",
          env,
          workspaceDir,
        });
        if (this.d.artifacts) {
          await this.d.sessions
            .makeDir({
              session: { runUid: this.uid, attempt: this.attempt },
              path: SESSION_ARTIFACTS_DIR,
              parents: true,
            })
            .catch((e) => this.log.warn({ err: String(e) }, "no artifacts directory in the workspace"));
        }
        if (
          this.d.artifacts &&
          res.info?.workspace &&
          join(res.info.workspace, SESSION_ARTIFACTS_DIR) !== env[ARTIFACTS_ENV]
        )
          this.log.warn(
            { workspace: res.info.workspace, artifactsDir: env[ARTIFACTS_ENV] },
            "the Runtime Server's workspace is not where runtimed expects it: $KRUNTIME_ARTIFACTS_DIR is outside the session's workspace",
          );
        this.log.info({ workspace: res.info?.workspace, created: res.created }, "session opened");
        return res.info;
      } catch (e) {
        const err = ConnectError.from(e);
        if (err.code === Code.FailedPrecondition) {
          this.abandon(`the Runtime Server holds a newer attempt of this session: ${err.rawMessage}`);
          return undefined;
        }
        if (err.code === Code.Unimplemented) {
          await this.finish(modeNotSupported("session"), []);
          this.interrupt = "abandon";
          return undefined;
        }
        if (err.code !== Code.Unavailable && err.code !== Code.Unknown && err.code !== Code.Internal) {
          await this.finish(
            {
              phase: RunPhase.Failed,
              reason: Reason.StartFailed,
              message: `the session could not be opened: ${err.rawMessage}`,
            },
            [],
          );
          this.interrupt = "abandon";
          return undefined;
        }
        this.log.warn({ err: err.message, retryInMs: delay }, "Open failed; retrying");
        await Bun.sleep(delay);
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  private armTimers(s: Session): void {
    const total = durationOr(this.run.spec.timeout, 0);
    if (total) {
      const started = (this.run.status?.timing?.startedMicros ?? nowMicros()) / 1000;
      this.timers.push(setTimeout(() => this.raise("timeout"), Math.max(0, started + total - Date.now())));
    }
    const idle = s.bounds.idleTimeoutMs;
    if (idle) {
      const check = () => {
        if (this.interrupt) return;
        const due = s.lastActivityMs + idle - Date.now();
        if (s.inProgress === 0 && !s.queue.busy && due <= 0) this.raise("idle");
        else this.timers.push(setTimeout(check, Math.max(50, due)));
      };
      this.timers.push(setTimeout(check, idle));
    }
  }

  /** Until an interrupt: checks that the server still holds the session (it may restart). */
  private async watch(s: Session): Promise<void> {
    const every = this.d.checkEveryMs ?? 2000;
    while (!this.interrupt) {
      await Promise.race([this.sleepUntilInterrupt(), Bun.sleep(every)]);
      if (this.interrupt) return;
      try {
        const st = await this.d.sessions.status({ runUid: this.uid }, { timeoutMs: 5000 });
        const i = st.info;
        if (i?.session?.attempt !== this.attempt || i.state === SessionState.CLOSED) {
          this.lostWhy = this.lostMessage("or closed it");
          this.raise("lost", true);
        }
      } catch (e) {
        const err = ConnectError.from(e);
        if (err.code === Code.NotFound) {
          this.lostWhy = this.lostMessage("");
          this.raise("lost", true);
        }
        // Unavailable: the server is restarting; the next check decides.
      }
    }
    void s;
  }

  private async end(): Promise<void> {
    const i = this.interrupt;
    if (i === "detach") {
      this.log.info("no longer following the session (runtimed stops); it stays open on the server");
      return;
    }
    if (i === "abandon") return this.closeOnServer(CloseMode.CANCEL);
    if (i === "cancel") {
      await this.closeOnServer(CloseMode.CANCEL);
      return this.finish(this.cancelled(), []);
    }
    if (i === "delete") {
      this.refuse("the Run is being deleted", "cancel");
      await this.closeOnServer(CloseMode.CANCEL);
      await this.releaseFinalizer();
      this.log.info("the Run is being deleted: session closed, finalizer removed");
      return;
    }
    if (i === "lost") {
      this.refuse(`lost:${this.lostWhy}`, "cancel");
      return this.fail(this.lostWhy);
    }
    if (i === "drain" || i === "idle" || i === "timeout") return this.finalize(i);
  }

  private refuse(why: string, mode: "drain" | "cancel"): void {
    const s = this.session;
    if (!s) return;
    s.refusing = why;
    s.queue.close(mode, why.replace(/^lost:/, ""));
  }

  private async finalize(i: "drain" | "idle" | "timeout" | Interrupt): Promise<void> {
    const s = this.session;
    const idle = s?.bounds.idleTimeoutMs ?? 0;
    const total = durationOr(this.run.spec.timeout, 0);
    const why =
      i === "idle"
        ? { reason: Reason.IdleTimeout, message: `no operation for ${msText(idle)} (idleTimeout)` }
        : i === "timeout"
          ? {
              reason: Reason.Timeout,
              message: `the session reached spec.timeout (${msText(total)} of lifetime)`,
            }
          : { reason: Reason.Drained, message: "spec.termination.mode: Drain" };
    this.refuse("the session is finalizing: no new operations", "drain");
    if (this.run.status?.phase !== RunPhase.Finalizing) {
      const w = await this.d.writer.write(
        this.run,
        "finalizing",
        this.patch(
          finalizingStatus(this.run, why.reason, `${why.message}; finishing accepted operations`, Date.now()),
        ),
        (r) => r.status?.attempt === this.attempt && r.status.phase === RunPhase.Finalizing,
      );
      if (!w.ok) {
        this.log.info({ result: w.result }, "Finalizing not recorded; the Run moved on");
        return this.closeOnServer(CloseMode.CANCEL);
      }
      this.run = w.run;
    }
    this.log.info({ reason: why.reason }, "session finalizing");
    const deadline = this.d.o.sessions.closeDeadlineMs;
    if (s) await Promise.race([s.queue.idle(), Bun.sleep(deadline)]);
    await this.closeOnServer(CloseMode.DRAIN, deadline);
    // A cancel during Finalizing (Immediate after Drain) wins.
    if (this.interrupt === "cancel") return this.finish(this.cancelled(), []);
    const outcome: Outcome =
      i === "timeout"
        ? {
            phase: RunPhase.Timeout,
            reason: Reason.Timeout,
            message: `${why.message}; the session was drained`,
          }
        : {
            phase: RunPhase.Succeeded,
            reason: why.reason,
            message: `${why.message}; the session was drained`,
          };
    let refs: ArtifactRef[] = [];
    let final = outcome;
    if (this.d.artifacts) {
      const dir = join(this.d.o.workspace, SERVER_SESSION_ROOT, this.uid, "session", SESSION_ARTIFACTS_DIR);
      const stored = await this.d.artifacts.record(
        this.run,
        this.attempt,
        outcome,
        new AbortController().signal,
        dir,
      );
      if (stored) {
        refs = stored.refs;
        if (stored.outcome) final = stored.outcome;
      }
    }
    await this.closeOnServer(CloseMode.CANCEL, 0, true);
    return this.finish(final, refs);
  }

  private cancelled(): Outcome {
    return {
      phase: RunPhase.Cancelled,
      reason: Reason.Cancelled,
      message:
        "cancelled by spec.termination.mode: Immediate; the active operation was killed and the queue cancelled",
    };
  }

  private async fail(message: string): Promise<void> {
    return this.finish({ phase: RunPhase.Failed, reason: Reason.SessionLost, message }, []);
  }

  private async closeOnServer(mode: CloseMode, deadlineMs = 0, removeWorkspace = false): Promise<void> {
    try {
      await this.d.sessions.close(
        { session: { runUid: this.uid, attempt: this.attempt }, mode, deadlineMs, removeWorkspace },
        { timeoutMs: deadlineMs + 10_000 },
      );
    } catch (e) {
      this.log.debug({ err: String(e) }, "Close");
    }
  }

  private async ensureFinalizer(): Promise<boolean> {
    try {
      const stored = await patchFinalizers(this.d.client, this.run, addFinalizerPatch);
      if (stored && stored.status?.attempt === this.attempt) this.run = stored;
      return stored !== undefined;
    } catch (e) {
      this.log.warn({ err: e }, "could not add the session finalizer");
      return true;
    }
  }

  private async releaseFinalizer(): Promise<void> {
    try {
      await patchFinalizers(this.d.client, this.run, removeFinalizerPatch);
    } catch (e) {
      this.log.warn({ err: e }, "could not remove the session finalizer");
    }
  }

  private patch(status: RunStatus): JsonPatchOp[] {
    return fencedStatusPatch(this.d.o.pod.uid, this.attempt, this.run.status?.phase, status);
  }

  private async writeReady(info: SessionInfo, startedMicros: number): Promise<boolean> {
    const attempt = this.attempt;
    const status = sessionReadyStatus(
      this.run,
      {
        ...podFacts(this.d.o, attempt),
        startedMicros,
        readyMicros: Number(info.openedMicros) || nowMicros(),
      },
      Date.now(),
    );
    const w = await this.d.writer.write(
      this.run,
      "ready",
      this.patch(status),
      (s) => s.status?.attempt === attempt && s.status.phase === RunPhase.Ready,
    );
    if (!w.ok) {
      this.log.info({ result: w.result, err: w.error }, "Ready not recorded; the Run moved on");
      this.raise("abandon", true);
      return false;
    }
    this.run = w.run;
    const scheduled = this.run.status?.timing?.scheduledMicros;
    this.log.info(
      {
        readyMs: scheduled ? (nowMicros() - scheduled) / 1000 : undefined,
        openMs: (nowMicros() - startedMicros) / 1000,
      },
      "session Ready",
    );
    return true;
  }

  private async finish(outcome: Outcome, refs: ArtifactRef[]): Promise<void> {
    this.writingTerminal = true;
    this.d.table.withdraw(this.uid, this.attempt);
    const status = sessionTerminalStatus(this.run, outcome, refs, nowMicros(), nowMicros(), Date.now());
    const attempt = this.attempt;
    const w = await this.d.writer.write(
      this.run,
      "terminal",
      this.patch(status),
      (s) => s.status?.attempt === attempt && isTerminalPhase(s.status.phase),
    );
    if (!w.ok) {
      this.log.warn({ phase: outcome.phase, result: w.result, err: w.error }, "terminal status not written");
      return;
    }
    this.run = w.run;
    this.d.metrics.finished.inc({ phase: outcome.phase });
    this.d.sessionMetrics.sessions.inc({ result: outcome.phase });
    await this.releaseFinalizer();
    this.log.info({ phase: outcome.phase, reason: outcome.reason, artifacts: refs.length }, "run finished");
  }
}
