/**
 * One Run on this pod, from the moment its assignment is seen to its terminal status: start the
 * attempt at once (nothing is awaited before Execute), write Running only if the attempt is still
 * going after `runningDelayMs`, write the terminal status in one fenced patch, retry in place per
 * `spec.retryPolicy` (attempt bumped, backoff, a fresh timeout per attempt), cancel on
 * `spec.termination.mode: Immediate`, and stop acting the moment the Run moves on (deleted,
 * re-placed, ended by the controller) — cancelling its execution, never writing.
 */
import {
  type ArtifactRef,
  canRetry,
  isTerminalPhase,
  Reason,
  type Run,
  RunPhase,
  type RunStatus,
  retryDelayMs,
  TerminationMode,
} from "@kruntimes/api";
import type { TaskStarted } from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";
import { mergeRefs, type RunArtifacts } from "../artifacts/run-artifacts.ts";
import { InputUnavailable, StagingAborted } from "../artifacts/stage-inputs.ts";
import { nowMicros } from "../clock.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { RuntimedOptions } from "../options.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import { finalOutcome, type Outcome } from "../status/outcome.ts";
import { fencedStatusPatch, retryStatus, runningPatch, terminalStatus } from "../status/run-status.ts";
import type { StatusWriter, WriteOutcome } from "../status/status-writer.ts";
import { attemptDirectory, removeAttemptDirectory } from "../workspaces/run-directory.ts";
import type { WorkspaceDirs } from "../workspaces/workspace-dirs.ts";
import { attemptResult } from "./attempt-result.ts";
import { type AttemptEnd, followAttempt } from "./attempt-stream.ts";
import { executeRequest } from "./execute-request.ts";

export interface SupervisorDeps {
  o: RuntimedOptions;
  tasks: RuntimeServerClients["tasks"];
  writer: StatusWriter;
  metrics: Metrics;
  log: Logger;
  draining(): boolean;
  done(sup: RunSupervisor): void;
  /** Present when the Runtime has an artifact store. */
  artifacts?: RunArtifacts;
  /** The PersistentWorkspaces bound to this pod (Runs with `spec.workspace`). */
  workspaces?: WorkspaceDirs;
}

/** `new`: a Scheduled attempt (Execute; re-attaches if the server has it). `adopt`: Running before we saw it. */
export type StartKind = "new" | "adopt";

export class RunSupervisor {
  private attempt: number;
  /** The attempt our in-flight retry write moves to: its watch event may beat the response. */
  private nextAttempt: number;
  private readonly abort = new AbortController();
  private cancelRequested = false;
  private abandoned = false;
  private writingTerminal = false;
  private executing = false;
  private wake: (() => void) | undefined;
  private readonly seenAt = performance.now();
  /** Wall clock when the assignment was seen, and the first attempt's seen → TaskStarted (ms). */
  private readonly seenMicros = nowMicros();
  private startMs: number | undefined;
  /** This Run's artifact references once an attempt stored some; written with every later status. */
  private artifactRefs: ArtifactRef[] | undefined;
  /** Stops the staging of artifact inputs in progress (on cancel as well as abandon). */
  private staging: AbortController | undefined;

  constructor(
    private run: Run,
    private readonly d: SupervisorDeps,
    private readonly kind: StartKind,
  ) {
    this.attempt = run.status?.attempt ?? 1;
    this.nextAttempt = this.attempt;
    if (run.spec.termination?.mode === TerminationMode.Immediate) this.cancelRequested = true;
  }

  get uid(): string {
    return this.run.metadata.uid ?? "";
  }
  get isAbandoned(): boolean {
    return this.abandoned;
  }
  get currentAttempt(): number {
    return this.attempt;
  }

  /** runtimed is shutting down: an attempt that has not started is left for the controller. */
  drain(): void {
    if (!this.executing) this.wake?.();
  }

  start(): void {
    const scheduledMicros = this.run.status?.timing?.scheduledMicros;
    if (this.kind === "new" && scheduledMicros)
      this.d.metrics.assignmentLag.observe(Math.max(0, this.seenMicros - scheduledMicros) / 1e6);
    this.d.metrics.inFlight.inc();
    this.main()
      .catch((e) =>
        this.d.log.error({ err: e, run: this.run.metadata.name, runUID: this.uid }, "run supervisor failed"),
      )
      .finally(() => {
        this.d.metrics.inFlight.dec();
        this.d.done(this);
      });
  }

  /** A watch event for this Run (MODIFIED while it runs). */
  observe(run: Run): void {
    const s = run.status;
    const attempt = s?.attempt ?? 0;
    if (attempt < this.attempt || this.abandoned) return;
    if (attempt > this.nextAttempt || s?.assignment?.podUID !== this.d.o.pod.uid) {
      this.abandon(`the Run moved on (attempt ${attempt} on pod ${s?.assignment?.pod ?? "none"})`);
      return;
    }
    if (attempt === this.attempt) this.run = run;
    if (isTerminalPhase(s?.phase) && !this.writingTerminal) {
      this.abandon(`the Run was ended by someone else (${s?.phase}, ${s?.reason ?? "no reason"})`);
      return;
    }
    if (run.spec.termination?.mode === TerminationMode.Immediate) this.requestCancel();
  }

  /** The Run is no longer ours (deleted, or its assignment left this pod): stop, write nothing. */
  abandon(why: string): void {
    // Our own terminal write takes a finished Run out of the field-selected watch: not news.
    if (this.abandoned || this.writingTerminal) return;
    this.abandoned = true;
    this.d.log.info(
      { run: this.run.metadata.name, runUID: this.uid, attempt: this.attempt },
      `stopping: ${why}`,
    );
    if (this.executing) void this.cancelOnServer(true);
    this.abort.abort();
    this.wake?.();
  }

  private requestCancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    this.staging?.abort();
    if (this.executing) void this.cancelOnServer(false);
    this.wake?.();
  }

  private async cancelOnServer(force: boolean): Promise<void> {
    try {
      await this.d.tasks.cancel({ runUid: this.uid, attempt: this.attempt, force });
    } catch (e) {
      // NOT_FOUND before TaskStarted: onStarted cancels again once the execution exists.
      this.d.log.debug({ err: e, runUID: this.uid }, "cancel");
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
  }

  private async main(): Promise<void> {
    let kind: StartKind | "retry" = this.kind;
    for (;;) {
      if (this.abandoned) return;
      if (kind !== "adopt") {
        const dueMs = (this.run.status?.timing?.scheduledMicros ?? 0) / 1000 - Date.now();
        if (dueMs > 0 && !this.cancelRequested && !this.d.draining()) await this.sleep(dueMs);
        if (this.abandoned) return;
        if (this.cancelRequested) {
          const outcome: Outcome = {
            phase: RunPhase.Cancelled,
            reason: Reason.Cancelled,
            message: `cancelled before attempt ${this.attempt} started`,
          };
          return this.finish({ outcome, finishedMicros: nowMicros() });
        }
        if (this.d.draining())
          return this.abandon("runtimed is shutting down; the controller re-places the Run");
      }
      const end = await this.runAttempt(kind);
      if (this.abandoned) return;
      if (end.kind === "aborted") {
        // Only staging ends "aborted" without the Run being abandoned: it was cancelled meanwhile.
        if (!this.cancelRequested) return;
        const outcome: Outcome = {
          phase: RunPhase.Cancelled,
          reason: Reason.Cancelled,
          message: `cancelled while attempt ${this.attempt}'s artifact inputs were staged`,
        };
        return this.finish({ outcome, finishedMicros: nowMicros() });
      }
      const result = attemptResult(end, nowMicros());
      if (this.d.artifacts) {
        await this.storeArtifacts(this.d.artifacts, result);
        if (this.abandoned) return;
      }
      const { outcome } = result;
      this.d.metrics.executionDuration.observe(
        { phase: outcome.phase },
        result.startedMicros ? Math.max(0, result.finishedMicros - result.startedMicros) / 1e6 : 0,
      );
      if (
        outcome.phase !== RunPhase.Succeeded &&
        !this.cancelRequested &&
        canRetry(this.run.spec, this.attempt, outcome.reason)
      ) {
        if (!(await this.writeRetry(outcome))) return;
        kind = "retry";
        continue;
      }
      result.outcome = finalOutcome(outcome, this.run.spec, this.attempt);
      return this.finish(result);
    }
  }

  /** Uploads what the attempt left; a failure to store changes the outcome, never loses it. */
  private async storeArtifacts(a: RunArtifacts, result: ReturnType<typeof attemptResult>): Promise<void> {
    const stored = await a.record(this.run, this.attempt, result.outcome, this.abort.signal);
    if (!stored) return;
    if (stored.refs.length)
      this.artifactRefs = mergeRefs(this.artifactRefs ?? this.run.status?.artifactRefs, stored.refs);
    if (stored.outcome) result.outcome = stored.outcome;
  }

  /** The Run as the status builders should see it: with the references this supervisor stored. */
  private withRefs(run: Run): Run {
    if (!this.artifactRefs) return run;
    return { ...run, status: { ...run.status, artifactRefs: this.artifactRefs } };
  }

  private async runAttempt(kind: StartKind | "retry"): Promise<AttemptEnd> {
    const attempt = this.attempt;
    const { metadata } = this.run;
    const log = this.d.log.child({
      run: metadata.name,
      runUID: this.uid,
      namespace: metadata.namespace,
      attempt,
    });
    this.d.metrics.started.inc({ kind: kind === "adopt" ? "adopted" : kind });
    // A workspace Run works in its workspace's directory (an adopted attempt already runs there).
    let workingDir = "";
    if (this.run.spec.workspace && kind !== "adopt") {
      const w = this.d.workspaces
        ? await this.d.workspaces.directoryFor(this.run)
        : { error: "this runtimed does not serve PersistentWorkspaces" };
      if ("error" in w) return { kind: "refused", message: w.error };
      workingDir = w.dir;
    }
    if (this.run.spec.artifactInputs?.length && kind !== "adopt") {
      const refused = await this.stageInputs(workingDir, log);
      if (refused) return refused;
    }
    this.executing = true;
    let runningTimer: ReturnType<typeof setTimeout> | undefined;
    const attemptStart = kind === "retry" ? performance.now() : this.seenAt;
    const onStarted = (s: TaskStarted) => {
      if (kind !== "adopt") {
        this.startMs ??= performance.now() - attemptStart;
        this.d.metrics.startLatency.observe(this.startMs / 1000);
      }
      if (this.cancelRequested || this.abandoned) void this.cancelOnServer(this.abandoned);
      if (this.run.status?.phase === RunPhase.Scheduled)
        runningTimer = setTimeout(
          () => void this.writeRunning(attempt, Number(s.startedAtMicros)),
          this.d.o.runningDelayMs,
        );
    };
    const request = executeRequest(this.run, attempt, this.d.o.workspace, workingDir);
    if (this.d.artifacts) {
      try {
        Object.assign(request.env, this.d.artifacts.prepare(this.uid, attempt));
      } catch (e) {
        log.warn({ err: e }, "no artifacts directory for this attempt");
      }
    }
    const end = await followAttempt(request, kind === "adopt", {
      tasks: this.d.tasks,
      log,
      signal: this.abort.signal,
      onStarted,
    });
    clearTimeout(runningTimer);
    this.executing = false;
    return end;
  }

  /**
   * Fetches `spec.artifactInputs` into the attempt's working directory (a workspace's, or the
   * per-attempt default the Runtime Server will use); an AttemptEnd when the task must not start.
   */
  private async stageInputs(workingDir: string, log: Logger): Promise<AttemptEnd | undefined> {
    const a = this.d.artifacts;
    if (!a)
      return {
        kind: "refused",
        reason: Reason.ArtifactInputUnavailable,
        message: `spec.artifactInputs needs a Runtime with spec.artifactStore (the store the artifacts are in); Runtime ${this.run.spec.runtime} has none`,
      };
    const dir = attemptDirectory(this.d.o.workspace, workingDir, this.uid, this.attempt);
    const stop = new AbortController();
    this.staging = stop;
    const onAbandon = () => stop.abort();
    this.abort.signal.addEventListener("abort", onAbandon);
    try {
      if (this.cancelRequested) stop.abort();
      await a.inputs.stage(this.run, dir, stop.signal, log);
      return undefined;
    } catch (e) {
      // The Runtime Server never gets this attempt, so it never cleans its default directory.
      if (workingDir === "") void removeAttemptDirectory(dir);
      if (e instanceof StagingAborted) return { kind: "aborted" };
      const message = e instanceof InputUnavailable ? e.message : String(e);
      log.warn({ err: message }, "artifact inputs not staged; the task does not start");
      return { kind: "refused", reason: Reason.ArtifactInputUnavailable, message };
    } finally {
      this.staging = undefined;
      this.abort.signal.removeEventListener("abort", onAbandon);
    }
  }

  private async writeRunning(attempt: number, startedMicros: number): Promise<void> {
    if (this.writingTerminal || this.abandoned || attempt !== this.attempt) return;
    const { pod } = this.d.o;
    const w = await this.d.writer.write(
      this.run,
      "running",
      runningPatch(pod.uid, attempt, startedMicros),
      (s) => s.status?.attempt === attempt && s.status.phase !== RunPhase.Scheduled,
    );
    if (w.ok && !this.writingTerminal && w.run.status?.attempt === this.attempt) this.run = w.run;
  }

  private async writeRetry(failed: Outcome): Promise<boolean> {
    const attempt = this.attempt;
    const delayMs = retryDelayMs(this.run.spec, attempt);
    const due = nowMicros() + delayMs * 1000;
    this.nextAttempt = attempt + 1;
    const w = await this.writeFenced(
      "retry",
      (run) => retryStatus(this.withRefs(run), failed, attempt, due, delayMs, Date.now()),
      (s) => s.status?.attempt === attempt + 1 && s.status.assignment?.podUID === this.d.o.pod.uid,
    );
    if (!w.ok) {
      this.nextAttempt = attempt;
      this.d.log.info(
        { run: this.run.metadata.name, runUID: this.uid, attempt, result: w.result, err: w.error },
        "retry not recorded; the Run moved on",
      );
      return false;
    }
    this.d.log.info(
      { run: this.run.metadata.name, runUID: this.uid, attempt, reason: failed.reason, retryInMs: delayMs },
      "attempt failed; retrying in place",
    );
    this.attempt = attempt + 1;
    this.run = w.run;
    return true;
  }

  /**
   * A terminal or retry write, fenced on pod UID + attempt AND on the phase last seen, so a Run the
   * controller ended meanwhile (recovery: PodUnhealthy) stays ended — a terminal phase never
   * changes. When the fence fails only because our own Running write landed after we last looked
   * (Scheduled → Running), the status is rebuilt on the stored Run and written again (twice at most).
   */
  private async writeFenced(
    kind: "terminal" | "retry",
    build: (run: Run) => RunStatus,
    landed: (stored: Run) => boolean,
  ): Promise<WriteOutcome> {
    const attempt = this.attempt;
    const podUID = this.d.o.pod.uid;
    for (let tries = 0; ; tries++) {
      const run = this.run;
      const ops = fencedStatusPatch(podUID, attempt, run.status?.phase, build(run));
      const w = await this.d.writer.write(run, kind, ops, landed);
      if (w.ok || w.result !== "fenced" || tries === 2) return w;
      const stored = await this.d.writer.read(run);
      const s = stored?.status;
      if (!stored || s?.attempt !== attempt || s.assignment?.podUID !== podUID || isTerminalPhase(s.phase)) {
        if (s?.attempt === attempt && isTerminalPhase(s.phase))
          this.d.log.warn(
            { run: run.metadata.name, runUID: this.uid, attempt, kind, phase: s.phase, reason: s.reason },
            "the Run was ended by someone else before our report landed; it stays as they ended it",
          );
        return w;
      }
      this.run = stored;
    }
  }

  private async finish(result: ReturnType<typeof attemptResult>): Promise<void> {
    this.writingTerminal = true;
    const attempt = this.attempt;
    const reportedMicros = nowMicros();
    // Ours landed when the stored status carries our report's time — not merely some terminal
    // phase: the controller's recovery may have ended the Run in the meantime.
    const landed = (s: Run) =>
      s.status?.attempt === attempt && s.status.timing?.reportedMicros === reportedMicros;
    let w = await this.writeFenced(
      "terminal",
      (run) => terminalStatus(this.withRefs(run), result, reportedMicros, Date.now()),
      landed,
    );
    if (!w.ok && w.result === "rejected") {
      // The full status failed validation (a bug worth reporting): record the outcome without the payload.
      const bare = { ...result, outputs: undefined, stdout: undefined, stderr: undefined };
      bare.outcome = {
        ...result.outcome,
        message: `${result.outcome.message} (results dropped: the API rejected them: ${w.error})`,
      };
      w = await this.writeFenced(
        "terminal",
        (run) => terminalStatus(this.withRefs(run), bare, reportedMicros, Date.now()),
        landed,
      );
    }
    const fields = {
      run: this.run.metadata.name,
      runUID: this.uid,
      namespace: this.run.metadata.namespace,
      attempt,
      phase: result.outcome.phase,
      reason: result.outcome.reason,
    };
    if (!w.ok) {
      this.d.log.warn({ ...fields, result: w.result, err: w.error }, "terminal status not written");
      return;
    }
    this.d.metrics.finished.inc({ phase: result.outcome.phase });
    const scheduledMicros = this.run.status?.timing?.scheduledMicros;
    // Where this Run's time went on this side, for a look at one Run (the metrics have the rest).
    const timing = {
      assignmentLagMs: scheduledMicros ? (this.seenMicros - scheduledMicros) / 1000 : undefined,
      startMs: this.startMs,
      reportMs: (nowMicros() - result.finishedMicros) / 1000,
    };
    this.d.log.info({ ...fields, exitCode: result.exitCode, timing }, "run finished");
  }
}
