/**
 * One FIFO mutation queue per session: one mutation (Exec, StartProcess, SignalProcess, WriteFile,
 * MakeDir, Remove, Rename) runs at a time, in arrival order. `enter` resolves with a Turn when the
 * operation may start and rejects with a ConnectError when it never will: RESOURCE_EXHAUSTED
 * ("session busy") when the session's queue (or this runtimed's total, QueueBudget) is full,
 * DEADLINE_EXCEEDED when its timeout passed while it waited, CANCELLED by CancelOperation or by
 * the caller going away, FAILED_PRECONDITION once the queue is closed. The running operation's
 * cancel hook (e.g. the Runtime Server's CancelOperation for an Exec) is called by `cancel(id)`
 * and by `close("cancel")`. Reads never enter the queue.
 */
import { Code, ConnectError } from "@connectrpc/connect";

/** Queued mutations of every session of this runtimed together. */
export class QueueBudget {
  private used = 0;
  constructor(readonly max: number) {}
  take(): boolean {
    if (this.used >= this.max) return false;
    this.used++;
    return true;
  }
  give(): void {
    this.used = Math.max(0, this.used - 1);
  }
  get inUse(): number {
    return this.used;
  }
}

export interface Turn {
  /** Ms left before the operation's deadline (queue wait already spent). */
  readonly remainingMs: number;
  /** Called by `cancel(id)` / `close("cancel")` while the operation runs. */
  onCancel(hook: () => void): void;
  /** The operation ended: the next one starts. */
  done(): void;
}

interface Waiter {
  id: string;
  deadline: number;
  resolve(t: Turn): void;
  reject(e: ConnectError): void;
  timer: ReturnType<typeof setTimeout>;
  unlisten(): void;
}

interface Running {
  id: string;
  cancelled: boolean;
  hook: (() => void) | undefined;
}

export const busy = () => new ConnectError("session busy", Code.ResourceExhausted);

export class MutationQueue {
  private readonly waiting: Waiter[] = [];
  private running: Running | undefined;
  private closed: string | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly maxQueued: number,
    private readonly budget: QueueBudget,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Mutations waiting (not counting the running one). */
  get depth(): number {
    return this.waiting.length;
  }
  get active(): string | undefined {
    return this.running?.id;
  }
  get busy(): boolean {
    return this.running !== undefined || this.waiting.length > 0;
  }

  /** Waits for this operation's turn; `timeoutMs` counts from now (queue wait included). */
  enter(id: string, timeoutMs: number, signal?: AbortSignal): Promise<Turn> {
    if (this.closed) return Promise.reject(new ConnectError(this.closed, Code.FailedPrecondition));
    if (signal?.aborted) return Promise.reject(new ConnectError("the caller went away", Code.Canceled));
    const deadline = this.now() + timeoutMs;
    if (!this.running && this.waiting.length === 0) return Promise.resolve(this.start(id, deadline));
    if (this.waiting.length >= this.maxQueued || !this.budget.take()) return Promise.reject(busy());
    return new Promise<Turn>((resolve, reject) => {
      const onAbort = () => this.drop(w, new ConnectError("the caller went away", Code.Canceled));
      const w: Waiter = {
        id,
        deadline,
        resolve,
        reject,
        timer: setTimeout(
          () =>
            this.drop(
              w,
              new ConnectError(
                `the operation timeout (${timeoutMs} ms) passed while it waited in the session's queue`,
                Code.DeadlineExceeded,
              ),
            ),
          timeoutMs,
        ),
        unlisten: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(w);
    });
  }

  /** Cancels a queued (rejected CANCELLED) or running (its hook) operation; false if unknown. */
  cancel(id: string): boolean {
    const w = this.waiting.find((x) => x.id === id);
    if (w) {
      this.drop(w, new ConnectError(`operation ${id} was cancelled while queued`, Code.Canceled));
      return true;
    }
    if (this.running?.id === id) {
      this.running.cancelled = true;
      this.running.hook?.();
      return true;
    }
    return false;
  }

  /**
   * No new operation is accepted from now on. `cancel`: the queued ones are rejected and the
   * running one's hook is called; `drain`: the queued ones still run in order.
   */
  close(mode: "drain" | "cancel", why: string): void {
    this.closed = why;
    if (mode === "drain") return;
    for (const w of this.waiting.splice(0)) this.settle(w);
    if (this.running) {
      this.running.cancelled = true;
      this.running.hook?.();
    }
    this.wakeIdle();
  }

  /** Resolves when nothing runs or waits (after a drain close: when the accepted ones finished). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private settle(w: Waiter): void {
    clearTimeout(w.timer);
    w.unlisten();
    this.budget.give();
    w.reject(new ConnectError(this.closed ?? "the session closed", Code.Canceled));
  }

  private drop(w: Waiter, e: ConnectError): void {
    const i = this.waiting.indexOf(w);
    if (i < 0) return;
    this.waiting.splice(i, 1);
    clearTimeout(w.timer);
    w.unlisten();
    this.budget.give();
    w.reject(e);
    this.wakeIdle();
  }

  private start(id: string, deadline: number): Turn {
    const r: Running = { id, cancelled: false, hook: undefined };
    this.running = r;
    let ended = false;
    return {
      remainingMs: Math.max(1, deadline - this.now()),
      onCancel: (hook) => {
        r.hook = hook;
        if (r.cancelled) hook();
      },
      done: () => {
        if (ended) return;
        ended = true;
        if (this.running === r) this.running = undefined;
        this.next();
      },
    };
  }

  private next(): void {
    const w = this.waiting.shift();
    if (!w) {
      this.wakeIdle();
      return;
    }
    clearTimeout(w.timer);
    w.unlisten();
    this.budget.give();
    w.resolve(this.start(w.id, w.deadline));
  }

  private wakeIdle(): void {
    if (this.busy) return;
    for (const r of this.idleWaiters.splice(0)) r();
  }
}
