/**
 * The Runs of this pod: a watch on the Runs assigned to it (field selector
 * `status.assignment.pod`, pod UID checked client-side), one RunSupervisor per Run started the
 * moment its Scheduled assignment arrives — no queue, so no Run waits behind another — and the
 * recovery after a restart: what the Runtime Server still runs is re-attached, Running attempts it
 * no longer knows are lost and handled by the retry policy, executions no Run owns are cancelled.
 */
import { type Run, RunMode, RunPhase, RunResource, runModeOf, TERMINAL_PHASES } from "@kruntimes/api";
import {
  type FunctionRegistration,
  FunctionState,
  UnregisterMode,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import {
  CloseMode,
  type SessionInfo,
  SessionState,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import { TaskState } from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";
import { Informer, type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { RunArtifacts } from "./artifacts/run-artifacts.ts";
import { RunSupervisor, type StartKind } from "./execution/run-supervisor.ts";
import { FunctionSupervisor } from "./functions/function-supervisor.ts";
import type { FunctionTable } from "./functions/function-table.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import type { RuntimedOptions } from "./options.ts";
import type { RuntimeServerClients } from "./runtime-server/client.ts";
import type { QueueBudget } from "./sessions/mutation-queue.ts";
import type { SessionMetrics } from "./sessions/session-metrics.ts";
import { SessionSupervisor } from "./sessions/session-supervisor.ts";
import type { SessionTable } from "./sessions/session-table.ts";
import type { StatusWriter } from "./status/status-writer.ts";
import type { WorkspaceDirs } from "./workspaces/workspace-dirs.ts";

export interface RuntimedDeps {
  o: RuntimedOptions;
  client: KubeClient;
  server: RuntimeServerClients;
  writer: StatusWriter;
  metrics: Metrics;
  log: Logger;
  /** Present when the Runtime has an artifact store. */
  artifacts?: RunArtifacts;
  /** The function Runs served here (shared with the dataplane). */
  table: FunctionTable;
  /** The sessions served here (shared with the dataplane's SessionService). */
  sessions: { table: SessionTable; budget: QueueBudget; metrics: SessionMetrics };
  /** The PersistentWorkspaces bound to this pod. */
  workspaces?: WorkspaceDirs;
}

type Supervisor = RunSupervisor | FunctionSupervisor | SessionSupervisor;

const FINISHED_MEMORY = 10_000;

export class Runtimed {
  private readonly supervisors = new Map<string, Supervisor>();
  /** `uid/attempt` of attempts whose supervisor ended: a late event must not start them again. */
  private readonly finished = new Map<string, true>();
  /** `uid/attempt` the Runtime Server had at start-up (re-attach directly). */
  private known = new Set<string>();
  /** Function registrations the Runtime Server held at start-up, by Run UID (re-adopted as they are). */
  private knownFunctions = new Map<string, FunctionRegistration>();
  /** Sessions the Runtime Server held at start-up, by Run UID (re-adopted without a status write). */
  private knownSessions = new Map<string, SessionInfo>();
  /** Run UID → the workspace (`namespace/name`) its supervisor works in, and supervisors per workspace. */
  private readonly workspaceOf = new Map<string, string>();
  private readonly workspaceUsers = new Map<string, number>();
  private informer: Informer<Run> | undefined;
  private draining = false;
  private idle: (() => void) | undefined;

  constructor(private readonly d: RuntimedDeps) {}

  get synced(): boolean {
    return (this.informer?.hasSynced ?? false) && !this.draining;
  }
  get isDraining(): boolean {
    return this.draining;
  }

  /** Whether a supervisor of this pod still works in the workspace `namespace/name`. */
  usesWorkspace(wsKey: string): boolean {
    return (this.workspaceUsers.get(wsKey) ?? 0) > 0;
  }

  private track(uid: string, run: Run): void {
    const name = run.spec.workspace?.name;
    if (!name || this.workspaceOf.has(uid)) return;
    const key = `${run.metadata.namespace ?? ""}/${name}`;
    this.workspaceOf.set(uid, key);
    this.workspaceUsers.set(key, (this.workspaceUsers.get(key) ?? 0) + 1);
  }

  private untrack(uid: string): void {
    const key = this.workspaceOf.get(uid);
    if (key === undefined) return;
    this.workspaceOf.delete(uid);
    const n = (this.workspaceUsers.get(key) ?? 1) - 1;
    if (n > 0) this.workspaceUsers.set(key, n);
    else this.workspaceUsers.delete(key);
    this.d.workspaces?.released(key);
  }

  async start(): Promise<void> {
    await this.waitForServer();
    const listed = await this.d.server.tasks.list({});
    this.known = new Set(listed.executions.map((x) => `${x.runUid}/${x.attempt}`));
    const registrations = await this.listFunctions();
    this.knownFunctions = new Map(registrations.map((r) => [r.runUid, r]));
    const openSessions = await this.listSessions();
    this.knownSessions = new Map(openSessions.map((x) => [x.session?.runUid ?? "", x]));
    const fieldSelector = await this.fieldSelector();
    const informer = new Informer<Run>(this.d.client, path(RunResource, this.d.o.pod.namespace), {
      ...(fieldSelector ? { fieldSelector } : {}),
    });
    this.informer = informer;
    informer.on({
      add: (r) => this.consider(r),
      update: (r) => this.consider(r),
      delete: (r) =>
        this.supervisors.get(r.metadata.uid ?? "")?.abandon("the Run was deleted or left this pod"),
      error: (e) => this.d.log.warn({ err: e }, "Run watch failed; resuming"),
    });
    informer.start();
    await informer.waitForSync();
    this.known.clear();
    for (const x of listed.executions) {
      if (x.state === TaskState.EXITED) continue;
      const sup = this.supervisors.get(x.runUid);
      if (sup && sup.currentAttempt === x.attempt) continue;
      this.d.log.info(
        { runUID: x.runUid, attempt: x.attempt, run: x.runName },
        "cancelling an execution no assigned Run owns",
      );
      await this.d.server.tasks.cancel({ runUid: x.runUid, attempt: x.attempt }).catch(() => {});
    }
    this.knownFunctions.clear();
    for (const r of registrations) {
      if (r.state === FunctionState.ENDED || r.state === FunctionState.FAILED) continue;
      const sup = this.supervisors.get(r.runUid);
      if (sup && sup.currentAttempt === r.attempt) continue;
      this.d.log.info(
        { runUID: r.runUid, attempt: r.attempt, run: r.runName },
        "unregistering a function no assigned Run owns",
      );
      await this.d.server.functions
        .unregister({ runUid: r.runUid, attempt: r.attempt, mode: UnregisterMode.CANCEL })
        .catch(() => {});
    }
    this.knownSessions.clear();
    for (const x of openSessions) {
      if (x.state === SessionState.CLOSED) continue;
      const uid = x.session?.runUid ?? "";
      const sup = this.supervisors.get(uid);
      if (sup && sup.currentAttempt === x.session?.attempt) continue;
      this.d.log.info(
        { runUID: uid, attempt: x.session?.attempt, run: x.runName },
        "closing a session no assigned Run owns",
      );
      await this.d.server.sessions
        .close({ session: { runUid: uid, attempt: x.session?.attempt ?? 0 }, mode: CloseMode.CANCEL })
        .catch(() => {});
    }
    this.d.log.info(
      { fieldSelector: fieldSelector ?? "(none: filtering client-side)", adopted: this.supervisors.size },
      "watching assigned Runs",
    );
  }

  /** Stop taking Runs; resolves when every started attempt has ended (or been abandoned). */
  async drain(): Promise<void> {
    this.draining = true;
    for (const s of this.supervisors.values()) s.drain();
    if (this.supervisors.size > 0) await new Promise<void>((r) => (this.idle = r));
    this.informer?.stop();
  }

  /** The server's registrations; empty when it does not implement function mode. */
  private async listFunctions(): Promise<FunctionRegistration[]> {
    try {
      return (await this.d.server.functions.list({})).registrations;
    } catch (e) {
      this.d.log.info({ err: String(e) }, "the Runtime Server lists no function registrations");
      return [];
    }
  }

  /** The server's sessions; empty when it does not implement session mode. */
  private async listSessions(): Promise<SessionInfo[]> {
    try {
      return (await this.d.server.sessions.list({})).sessions;
    } catch (e) {
      this.d.log.info({ err: String(e) }, "the Runtime Server lists no sessions");
      return [];
    }
  }

  private async waitForServer(): Promise<void> {
    const t0 = Date.now();
    let lastLog = 0;
    for (;;) {
      try {
        await this.d.server.runtime.health({}, { timeoutMs: 2000 });
        return;
      } catch (e) {
        if (Date.now() - lastLog > 5000) {
          lastLog = Date.now();
          this.d.log.info(
            { socket: this.d.o.socketPath, waitedMs: Date.now() - t0, err: String(e) },
            "waiting for the Runtime Server",
          );
        }
        await Bun.sleep(100);
      }
    }
  }

  /**
   * The narrowest server-side selector the Run CRD supports: this pod's unfinished Runs, else all
   * of this pod's Runs, else none (every Run of the namespace, filtered here). Finished Runs are
   * kept out of the cache where possible: their tails would only cost memory.
   */
  private async fieldSelector(): Promise<string | undefined> {
    const pod = `status.assignment.pod=${this.d.o.pod.name}`;
    const unfinished = TERMINAL_PHASES.map((p) => `status.phase!=${p}`);
    // Other errors are retried for a minute: a runtimed (re)started while the apiserver restarts
    // meets refusals and 403s (its authorizer not synced yet); exiting would cost a crash-loop
    // backoff (the chaos suite's overlapping faults).
    const giveUpAt = Date.now() + 60_000;
    for (const sel of [[pod, ...unfinished].join(","), pod]) {
      for (let delay = 250; ; delay = Math.min(delay * 2, 4000)) {
        try {
          await this.d.client.list(path(RunResource, this.d.o.pod.namespace), {
            fieldSelector: sel,
            limit: 1,
          });
          return sel;
        } catch (e) {
          if (e instanceof KubeError && e.code === 400) break;
          if (Date.now() > giveUpAt) throw e;
          this.d.log.warn({ err: e }, "listing this pod's Runs failed; retrying");
          await Bun.sleep(delay);
        }
      }
    }
    this.d.log.warn(
      "the Run CRD has no selectable status.assignment.pod; watching every Run of the namespace",
    );
    return undefined;
  }

  private consider(run: Run): void {
    const uid = run.metadata.uid ?? "";
    const sup = this.supervisors.get(uid);
    if (sup && !sup.isAbandoned) {
      sup.observe(run);
      return;
    }
    const s = run.status;
    if (!s?.assignment || s.assignment.podUID !== this.d.o.pod.uid || this.draining) return;
    const key = `${uid}/${s.attempt ?? 1}`;
    if (this.finished.has(key)) return;
    const mode = runModeOf(run.spec);
    if (mode === RunMode.Function) {
      this.considerFunction(run, key);
      return;
    }
    if (mode === RunMode.Session) {
      this.considerSession(run, key);
      return;
    }
    if (s.phase !== RunPhase.Scheduled && s.phase !== RunPhase.Running) return;
    if (mode !== RunMode.Task) {
      this.d.log.warn(
        { run: run.metadata.name, runUID: uid, mode },
        "this runtimed does not execute this mode",
      );
      return;
    }
    const kind: StartKind = s.phase === RunPhase.Running || this.known.has(key) ? "adopt" : "new";
    const next = new RunSupervisor(
      run,
      {
        ...this.d,
        tasks: this.d.server.tasks,
        draining: () => this.draining,
        done: (finished) => this.done(finished),
      },
      kind,
    );
    this.supervisors.set(uid, next);
    this.track(uid, run);
    next.start();
  }

  /** A function Run: Scheduled starts a registration, Ready (after a restart) re-adopts it. */
  private considerFunction(run: Run, key: string): void {
    const phase = run.status?.phase;
    if (phase !== RunPhase.Scheduled && phase !== RunPhase.Ready && phase !== RunPhase.Running) return;
    const uid = run.metadata.uid ?? "";
    const known = this.knownFunctions.get(uid);
    const next = new FunctionSupervisor(
      run,
      {
        ...this.d,
        functions: this.d.server.functions,
        draining: () => this.draining,
        done: (finished) => this.done(finished),
        deleteDrainMs: this.d.o.functionDeleteDrainMs,
      },
      phase === RunPhase.Scheduled ? "new" : "adopt",
      known,
    );
    this.d.log.debug({ key, phase }, "function Run assigned here");
    this.supervisors.set(uid, next);
    this.track(uid, run);
    next.start();
  }

  /** A session Run: Scheduled opens it; Ready or Finalizing (after a restart) re-adopts it. */
  private considerSession(run: Run, key: string): void {
    const phase = run.status?.phase;
    if (phase !== RunPhase.Scheduled && phase !== RunPhase.Ready && phase !== RunPhase.Finalizing) return;
    const uid = run.metadata.uid ?? "";
    const next = new SessionSupervisor(
      run,
      {
        ...this.d,
        sessions: this.d.server.sessions,
        sessionMetrics: this.d.sessions.metrics,
        table: this.d.sessions.table,
        budget: this.d.sessions.budget,
        draining: () => this.draining,
        done: (finished) => this.done(finished),
      },
      phase === RunPhase.Scheduled ? "new" : "adopt",
      this.knownSessions.get(uid),
    );
    this.d.log.debug({ key, phase }, "session Run assigned here");
    this.supervisors.set(uid, next);
    next.start();
  }

  private done(sup: Supervisor): void {
    if (this.supervisors.get(sup.uid) === sup) {
      this.supervisors.delete(sup.uid);
      this.untrack(sup.uid);
    }
    this.finished.set(`${sup.uid}/${sup.currentAttempt}`, true);
    if (this.finished.size > FINISHED_MEMORY) {
      const oldest = this.finished.keys().next().value;
      if (oldest !== undefined) this.finished.delete(oldest);
    }
    if (this.supervisors.size === 0) this.idle?.();
  }
}
