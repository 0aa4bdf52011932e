/**
 * One function Run on this pod, from its assignment to its end. Register with the Runtime Server
 * (the finalizer patch in flight at the same time), then ONE fenced status write straight to Ready,
 * then follow the registration's Watch: log lines become records, its end becomes the terminal
 * write. runtimed ends a registration itself on `termination.mode: Immediate` (Cancelled), at
 * `spec.timeout` (the whole lifetime: Timeout) and on deletion (drain, then the finalizer goes).
 * A failed load goes through the retry policy (RegistrationFailed); a registration the server lost
 * is registered again under the same attempt without a status write; a Run that moved on (another
 * pod or attempt, ended by someone else) is unregistered and never written.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  canRetry,
  durationOr,
  isTerminalPhase,
  Reason,
  type Run,
  RunPhase,
  type RunStatus,
  retryDelayMs,
  TerminationMode,
} from "@kruntimes/api";
import {
  type FunctionRegistration,
  FunctionState,
  UnregisterMode,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import type { KubeClient } from "@kruntimes/kube";
import { nowMicros } from "../clock.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { RuntimedOptions } from "../options.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import { finalOutcome, type Outcome } from "../status/outcome.ts";
import { fencedStatusPatch, type JsonPatchOp, retryStatus } from "../status/run-status.ts";
import type { StatusWriter } from "../status/status-writer.ts";
import type { WorkspaceDirs } from "../workspaces/workspace-dirs.ts";
import { addFinalizerPatch, patchFinalizers, removeFinalizerPatch } from "./finalizer.ts";
import { type EndIntent, endVerdict, modeNotSupported, registrationFailed } from "./function-outcome.ts";
import { functionTerminalStatus, podFacts, readyStatus, withoutService } from "./function-status.ts";

import type { FunctionTable } from "./function-table.ts";
import { registerRequest } from "./register-request.ts";

export interface FunctionSupervisorDeps {
  o: RuntimedOptions;
  functions: RuntimeServerClients["functions"];
  client: KubeClient;
  writer: StatusWriter;
  metrics: Metrics;
  log: Logger;
  table: FunctionTable;
  draining(): boolean;
  done(sup: FunctionSupervisor): void;
  /** How long a deleted Run's in-flight invocations may finish before they are cancelled. */
  deleteDrainMs: number;
  /** The PersistentWorkspaces bound to this pod (Runs with `spec.workspace`). */
  workspaces?: WorkspaceDirs;
}

/** `new`: a Scheduled attempt. `adopt`: Ready before we saw it (runtimed restarted). */
export type FunctionStartKind = "new" | "adopt";

/** What stops serving: an end runtimed makes, the Run moving away, or runtimed's own shutdown. */
type Interrupt = EndIntent | "abandon" | "detach";

type Registered =
  | { kind: "ready"; registration: FunctionRegistration }
  | { kind: "failed"; outcome: Outcome };

const RETRY_CODES = new Set([
  Code.Unavailable,
  Code.Unknown,
  Code.Internal,
  Code.DeadlineExceeded,
  Code.Aborted,
]);

export class FunctionSupervisor {
  private attempt: number;
  private nextAttempt: number;
  private interrupt: Interrupt | undefined;
  private stop = new AbortController();
  private wake: (() => void) | undefined;
  private writingTerminal = false;
  private timeoutTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly log: Logger;

  constructor(
    private run: Run,
    private readonly d: FunctionSupervisorDeps,
    private readonly kind: FunctionStartKind,
    /** The server's registration of this Run found at start-up (re-adopt without Register). */
    private readonly known?: FunctionRegistration,
  ) {
    this.attempt = run.status?.attempt ?? 1;
    this.nextAttempt = this.attempt;
    this.log = d.log.child({
      run: run.metadata.name,
      runUID: run.metadata.uid,
      namespace: run.metadata.namespace,
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
      .catch((e) => this.log.error({ err: e, attempt: this.attempt }, "function supervisor failed"))
      .finally(() => {
        clearTimeout(this.timeoutTimer);
        this.d.table.withdraw(this.uid, this.attempt);
        this.d.metrics.inFlight.dec();
        this.d.done(this);
      });
  }

  /** runtimed is shutting down: stop following, leave the registration (a restart re-adopts it). */
  drain(): void {
    this.raise("detach");
  }

  observe(run: Run): void {
    const s = run.status;
    const attempt = s?.attempt ?? 0;
    if (attempt < this.attempt || this.interrupt === "abandon") return;
    if (attempt > this.nextAttempt || s?.assignment?.podUID !== this.d.o.pod.uid) {
      this.abandon(`the Run moved on (attempt ${attempt} on pod ${s?.assignment?.pod ?? "none"})`);
      return;
    }
    if (attempt === this.attempt) this.run = run;
    if (isTerminalPhase(s?.phase) && !this.writingTerminal) {
      this.abandon(`the Run was ended by someone else (${s?.phase}, ${s?.reason ?? "no reason"})`);
      return;
    }
    if (run.metadata.deletionTimestamp) this.raise("delete");
    else if (run.spec.termination?.mode === TerminationMode.Immediate) this.raise("cancel");
  }

  /** The Run is no longer ours (deleted, re-placed, ended elsewhere): unregister, write nothing. */
  abandon(why: string): void {
    if (this.interrupt === "abandon" || this.writingTerminal) return;
    this.log.info({ attempt: this.attempt }, `stopping: ${why}`);
    this.raise("abandon");
  }

  private raise(i: Interrupt): void {
    const cur = this.interrupt;
    if (cur === "abandon") return;
    if (cur === "delete" && i !== "abandon") return;
    if (cur && i !== "abandon" && i !== "delete") return;
    this.interrupt = i;
    this.d.table.withdraw(this.uid, this.attempt);
    this.stop.abort();
    this.wake?.();
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
    // A deletion or cancel already on the Run when we first see it.
    this.observe(this.run);
    let kind: FunctionStartKind | "retry" = this.kind;
    for (;;) {
      if (this.interrupt === "abandon" || this.interrupt === "detach") return this.leave();
      if (kind !== "adopt") {
        const dueMs = (this.run.status?.timing?.scheduledMicros ?? 0) / 1000 - Date.now();
        if (dueMs > 0 && !this.interrupt) await this.sleep(dueMs);
      }
      if (this.interrupt) return this.endUnregistered();
      const startedMicros = this.run.status?.timing?.startedMicros ?? nowMicros();
      const reg = await this.register(kind);
      if (!reg) return this.end();
      if (reg.kind === "failed") {
        this.d.metrics.registrations.inc({ result: "failed" });
        if (!this.interrupt && canRetry(this.run.spec, this.attempt, Reason.RegistrationFailed)) {
          if (!(await this.writeRetry(reg.outcome))) return;
          kind = "retry";
          continue;
        }
        return this.finish(finalOutcome(reg.outcome, this.run.spec, this.attempt), undefined);
      }
      if (this.run.status?.phase !== RunPhase.Ready || this.run.status.attempt !== this.attempt) {
        if (!(await this.writeReady(reg.registration, startedMicros))) return this.end();
      }
      this.armTimeout();
      if ((await this.serve()) !== "retry") return;
      kind = "retry";
    }
  }

  /**
   * Registers the current attempt (or finds it registered), with the finalizer patch alongside.
   * Undefined when interrupted or when a newer attempt holds the Run on the server.
   */
  private async register(kind: FunctionStartKind | "retry"): Promise<Registered | undefined> {
    const finalizer = this.ensureFinalizer();
    let reg: Registered | undefined;
    if (
      kind === "adopt" &&
      this.known?.attempt === this.attempt &&
      this.known.state === FunctionState.READY
    ) {
      this.d.metrics.registrations.inc({ result: "readopted" });
      this.log.info({ attempt: this.attempt }, "re-adopted the registration the Runtime Server kept");
      reg = { kind: "ready", registration: this.known };
    } else {
      reg = await this.callRegister(kind === "adopt" ? "reregistered" : "ready");
    }
    if (!(await finalizer)) {
      this.abandon("the Run is gone");
      return undefined;
    }
    return reg;
  }

  private async ensureFinalizer(): Promise<boolean> {
    try {
      const stored = await patchFinalizers(this.d.client, this.run, addFinalizerPatch);
      if (stored && stored.status?.attempt === this.attempt) this.run = stored;
      return stored !== undefined;
    } catch (e) {
      this.log.warn({ err: e }, "could not add the function finalizer");
      return true;
    }
  }

  /** Register, waiting out a restarting server; FAILED or a refused request is RegistrationFailed. */
  private async callRegister(okResult: "ready" | "reregistered"): Promise<Registered | undefined> {
    let workingDir: string | undefined;
    if (this.run.spec.workspace) {
      const w = this.d.workspaces
        ? await this.d.workspaces.directoryFor(this.run)
        : { error: "this runtimed does not serve PersistentWorkspaces" };
      if ("error" in w) return { kind: "failed", outcome: registrationFailed(w.error) };
      workingDir = w.dir;
    }
    const req = registerRequest(this.run, this.attempt, workingDir);
    let delay = 50;
    for (;;) {
      if (this.interrupt) return undefined;
      try {
        const res = await this.d.functions.register(req, { signal: this.stop.signal });
        let r = res.registration;
        if (r?.state === FunctionState.REGISTERING) r = await this.awaitLoaded();
        if (!r) return undefined;
        if (r.state === FunctionState.READY) {
          this.d.metrics.registrations.inc({ result: okResult });
          this.log.info(
            { attempt: this.attempt, created: res.created, concurrency: r.concurrency },
            okResult === "ready"
              ? "function registered"
              : "function registered again (the server had lost it)",
          );
          return { kind: "ready", registration: r };
        }
        return { kind: "failed", outcome: registrationFailed(r.error || FunctionState[r.state]) };
      } catch (e) {
        if (this.interrupt) return undefined;
        const err = ConnectError.from(e);
        if (err.code === Code.FailedPrecondition) {
          this.abandon(`the Runtime Server holds a newer attempt of this Run: ${err.rawMessage}`);
          return undefined;
        }
        if (err.code === Code.Unimplemented) return { kind: "failed", outcome: modeNotSupported("function") };
        if (!RETRY_CODES.has(err.code))
          return { kind: "failed", outcome: registrationFailed(err.rawMessage) };
        this.log.warn({ err: err.message, retryInMs: delay }, "Register failed; retrying");
        await this.sleep(delay);
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  /** A Register answered REGISTERING: the Watch says when loading ended. */
  private async awaitLoaded(): Promise<FunctionRegistration | undefined> {
    const stream = this.d.functions.watch(
      { runUid: this.uid, attempt: this.attempt },
      { signal: this.stop.signal },
    );
    for await (const res of stream) {
      const ev = res.event;
      if (ev.case === "ended") return ev.value;
      if (ev.case === "state" && ev.value.state !== FunctionState.REGISTERING) return ev.value;
    }
    return undefined;
  }

  /** Follows the Watch until the registration ends or something interrupts; re-registers a lost one. */
  private async serve(): Promise<"retry" | undefined> {
    this.d.table.serve(this.uid, {
      namespace: this.run.metadata.namespace ?? "",
      name: this.run.metadata.name ?? "",
      attempt: this.attempt,
    });
    const lines = this.log.child({ attempt: this.attempt });
    let delay = 50;
    for (;;) {
      if (this.interrupt) {
        await this.end();
        return;
      }
      let ended: FunctionRegistration | undefined;
      try {
        const stream = this.d.functions.watch(
          { runUid: this.uid, attempt: this.attempt },
          { signal: this.stop.signal },
        );
        for await (const res of stream) {
          const ev = res.event;
          if (ev.case === "log") {
            const { invocationId, stream: name } = ev.value;
            for (const line of ev.value.lines)
              lines.info({ invocation: invocationId, stream: name, line }, "output");
          } else if (ev.case === "ended") {
            ended = ev.value;
            break;
          }
          delay = 50;
        }
        if (!ended) throw new ConnectError("the Watch ended without FunctionEnded", Code.Unavailable);
      } catch (e) {
        if (this.interrupt) {
          await this.end();
          return;
        }
        const err = ConnectError.from(e);
        if (err.code === Code.NotFound || err.code === Code.FailedPrecondition) {
          const next = await this.reregister(`the Runtime Server no longer has it (${err.rawMessage})`);
          if (next === "ok") continue;
          return next === "retry" ? "retry" : undefined;
        }
        lines.warn({ err: err.message, retryInMs: delay }, "function Watch failed; retrying");
        await this.sleep(delay);
        delay = Math.min(delay * 2, 2000);
        continue;
      }
      if (this.interrupt) {
        await this.end(ended);
        return;
      }
      const verdict = endVerdict(ended, undefined, this.timeoutMs());
      if (verdict.kind === "terminal") {
        await this.finish(verdict.outcome, ended);
        return;
      }
      const next = await this.reregister(verdict.why);
      if (next !== "ok") return next === "retry" ? "retry" : undefined;
    }
  }

  /** The server lost the registration: register the same attempt again (no status write). */
  private async reregister(why: string): Promise<"ok" | "retry" | "stop"> {
    this.d.table.withdraw(this.uid, this.attempt);
    if (this.d.draining()) {
      this.raise("detach");
      return "stop";
    }
    this.log.info({ attempt: this.attempt }, `registering again: ${why}`);
    const reg = await this.callRegister("reregistered");
    if (!reg) {
      await this.end();
      return "stop";
    }
    if (reg.kind === "failed") {
      this.d.metrics.registrations.inc({ result: "failed" });
      // Retried in place as a new attempt: its Scheduled write takes the Run out of service.
      if (canRetry(this.run.spec, this.attempt, Reason.RegistrationFailed))
        return (await this.writeRetry(reg.outcome)) ? "retry" : "stop";
      await this.finish(finalOutcome(reg.outcome, this.run.spec, this.attempt), undefined);
      return "stop";
    }
    this.d.table.serve(this.uid, {
      namespace: this.run.metadata.namespace ?? "",
      name: this.run.metadata.name ?? "",
      attempt: this.attempt,
    });
    return "ok";
  }

  private timeoutMs(): number {
    return durationOr(this.run.spec.timeout, 0);
  }

  /** spec.timeout bounds the lifetime from the first registration (timing.startedMicros). */
  private armTimeout(): void {
    const ms = this.timeoutMs();
    if (!ms) return;
    const started = this.run.status?.timing?.startedMicros ?? nowMicros();
    const left = Math.max(0, started / 1000 + ms - Date.now());
    clearTimeout(this.timeoutTimer);
    this.timeoutTimer = setTimeout(() => this.raise("timeout"), left);
  }

  /** Acts on the interrupt once serving stopped. */
  private async end(ended?: FunctionRegistration): Promise<void> {
    const i = this.interrupt;
    if (i === "detach") return this.leave();
    if (i === "abandon") {
      await this.unregister(UnregisterMode.CANCEL, 0);
      return;
    }
    if (i === "delete") {
      await this.unregister(UnregisterMode.DRAIN, this.d.deleteDrainMs);
      await this.releaseFinalizer();
      this.log.info(
        { attempt: this.attempt },
        "the Run is being deleted: unregistered (drained), finalizer removed",
      );
      return;
    }
    if (i === "cancel" || i === "timeout") {
      const final = (await this.unregister(UnregisterMode.CANCEL, 0)) ?? ended;
      const verdict = endVerdict(
        final ?? ({ endReason: 0, error: "", invocations: 0 } as unknown as FunctionRegistration),
        i,
        this.timeoutMs(),
      );
      if (verdict.kind === "terminal") return this.finish(verdict.outcome, final);
    }
  }

  /** Interrupted before a registration existed. */
  private async endUnregistered(): Promise<void> {
    const i = this.interrupt;
    if (i === "delete") {
      await this.releaseFinalizer();
      return;
    }
    if (i === "cancel") {
      return this.finish(
        {
          phase: RunPhase.Cancelled,
          reason: Reason.Cancelled,
          message: `cancelled before attempt ${this.attempt} registered`,
        },
        undefined,
      );
    }
    return this.end();
  }

  private leave(): void {
    this.log.info({ attempt: this.attempt }, "no longer following the registration (runtimed stops)");
  }

  private async unregister(mode: UnregisterMode, drainMs: number): Promise<FunctionRegistration | undefined> {
    try {
      const res = await this.d.functions.unregister(
        { runUid: this.uid, attempt: this.attempt, mode, drainTimeoutMs: drainMs },
        { timeoutMs: drainMs + 10_000 },
      );
      return res.registration;
    } catch (e) {
      this.log.debug({ err: e, attempt: this.attempt }, "unregister");
      return undefined;
    }
  }

  private async releaseFinalizer(): Promise<void> {
    try {
      await patchFinalizers(this.d.client, this.run, removeFinalizerPatch);
    } catch (e) {
      this.log.warn({ err: e }, "could not remove the function finalizer");
    }
  }

  /** Fenced on pod UID + attempt and on the phase we decided on. */
  private patch(status: RunStatus, phase: string | undefined): JsonPatchOp[] {
    return fencedStatusPatch(this.d.o.pod.uid, this.attempt, phase, status);
  }

  private async writeReady(r: FunctionRegistration, startedMicros: number): Promise<boolean> {
    const attempt = this.attempt;
    const status = readyStatus(
      this.run,
      {
        ...podFacts(this.d.o, attempt),
        startedMicros,
        readyMicros: Number(r.readyMicros) || nowMicros(),
      },
      Date.now(),
    );
    const w = await this.d.writer.write(
      this.run,
      "ready",
      this.patch(status, this.run.status?.phase),
      (s) => s.status?.attempt === attempt && s.status.phase === RunPhase.Ready,
    );
    if (!w.ok) {
      this.log.info({ attempt, result: w.result, err: w.error }, "Ready not recorded; the Run moved on");
      this.raise("abandon");
      return false;
    }
    this.run = w.run;
    const scheduled = this.run.status?.timing?.scheduledMicros;
    this.log.info(
      {
        attempt,
        readyMs: scheduled ? (nowMicros() - scheduled) / 1000 : undefined,
        registerMs: (nowMicros() - startedMicros) / 1000,
      },
      "function Ready",
    );
    return true;
  }

  private async writeRetry(failed: Outcome): Promise<boolean> {
    const attempt = this.attempt;
    const delayMs = retryDelayMs(this.run.spec, attempt);
    const status = withoutService(
      retryStatus(this.run, failed, attempt, nowMicros() + delayMs * 1000, delayMs, Date.now()),
      failed.reason,
      failed.message,
      Date.now(),
    );
    this.nextAttempt = attempt + 1;
    const w = await this.d.writer.write(
      this.run,
      "retry",
      this.patch(status, this.run.status?.phase),
      (s) => s.status?.attempt === attempt + 1 && s.status.assignment?.podUID === this.d.o.pod.uid,
    );
    if (!w.ok) {
      this.nextAttempt = attempt;
      this.log.info({ attempt, result: w.result, err: w.error }, "retry not recorded; the Run moved on");
      return false;
    }
    this.log.info(
      { attempt, reason: failed.reason, retryInMs: delayMs },
      "registration failed; retrying in place",
    );
    this.attempt = attempt + 1;
    this.run = w.run;
    clearTimeout(this.timeoutTimer);
    return true;
  }

  private async finish(outcome: Outcome, final: FunctionRegistration | undefined): Promise<void> {
    this.writingTerminal = true;
    this.d.table.withdraw(this.uid, this.attempt);
    const attempt = this.attempt;
    const finishedMicros = Number(final?.endedMicros ?? 0) || nowMicros();
    const status = functionTerminalStatus(
      this.run,
      outcome,
      this.run.status?.timing?.startedMicros,
      finishedMicros,
      nowMicros(),
      Date.now(),
    );
    const w = await this.d.writer.write(
      this.run,
      "terminal",
      this.patch(status, this.run.status?.phase),
      (s) => s.status?.attempt === attempt && isTerminalPhase(s.status.phase),
    );
    const fields = {
      attempt,
      phase: outcome.phase,
      reason: outcome.reason,
      invocations: final ? Number(final.invocations) : undefined,
    };
    if (!w.ok) {
      this.log.warn({ ...fields, result: w.result, err: w.error }, "terminal status not written");
      return;
    }
    this.run = w.run;
    this.d.metrics.finished.inc({ phase: outcome.phase });
    await this.releaseFinalizer();
    this.log.info(fields, "run finished");
  }
}
