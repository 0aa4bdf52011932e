/**
 * The sessions this runtimed serves: Run UID → Session (name, attempt, bounds, its mutation
 * queue, whether it still accepts operations, when the last operation ended). The supervisor puts
 * an entry when the session is open on the Runtime Server and takes it out when it ended; the
 * dataplane's fence check is one Map lookup.
 */
import type { Logger } from "../logger.ts";
import { MutationQueue, type QueueBudget } from "./mutation-queue.ts";
import type { SessionBounds } from "./session-limits.ts";

export class Session {
  readonly queue: MutationQueue;
  /** Set when the session stops taking operations (Finalizing, cancelled, lost): the refusal text. */
  refusing: string | undefined;
  /** Operations in progress, reads included (a session with one is never idle). */
  inProgress = 0;
  lastActivityMs: number;
  private activityListeners: (() => void)[] = [];

  constructor(
    readonly uid: string,
    readonly namespace: string,
    readonly name: string,
    readonly attempt: number,
    readonly bounds: SessionBounds,
    budget: QueueBudget,
    /** Records of this session (run, runUID, namespace, attempt). */
    readonly log: Logger,
  ) {
    this.queue = new MutationQueue(bounds.maxQueuedOperations, budget);
    this.lastActivityMs = Date.now();
  }

  get ref() {
    return { runUid: this.uid, attempt: this.attempt };
  }

  begin(): void {
    this.inProgress++;
    this.lastActivityMs = Date.now();
  }

  end(): void {
    this.inProgress = Math.max(0, this.inProgress - 1);
    this.lastActivityMs = Date.now();
    for (const l of this.activityListeners) l();
  }

  onActivity(l: () => void): void {
    this.activityListeners.push(l);
  }
}

export class SessionTable {
  private readonly sessions = new Map<string, Session>();

  serve(s: Session): void {
    this.sessions.set(s.uid, s);
  }

  withdraw(uid: string, attempt: number): void {
    if (this.sessions.get(uid)?.attempt === attempt) this.sessions.delete(uid);
  }

  get(uid: string): Session | undefined {
    return this.sessions.get(uid);
  }

  get size(): number {
    return this.sessions.size;
  }

  all(): IterableIterator<Session> {
    return this.sessions.values();
  }
}
