/**
 * A keyed work queue in the controller-runtime mould: a key is queued at most once, never handled
 * by two workers at the same time (a key added while it is being handled runs again afterwards),
 * and a sync result says what happens next — done, requeue after a delay, or retry with
 * per-key exponential backoff when it threw.
 */
import { Backoff } from "./backoff.ts";

export type SyncResult = { requeueAfterMs?: number } | undefined;
export type SyncHandler = (key: string) => Promise<SyncResult>;

export interface WorkQueueOptions {
  workers: number;
  retryInitialMs: number;
  retryMaxMs: number;
  onError(key: string, err: unknown, retryInMs: number): void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: Timer }>();
  private readonly backoff: Backoff;
  private running = 0;
  private stopped = false;
  private paused = true;

  constructor(
    private readonly handler: SyncHandler,
    private readonly opts: WorkQueueOptions,
  ) {
    this.backoff = new Backoff(opts.retryInitialMs, opts.retryMaxMs);
  }

  /** Workers start only now, so keys queued before (the initial list) wait for the caller's setup. */
  start(): void {
    this.paused = false;
    this.pump();
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.pump();
  }

  /** Runs `key` after `ms` unless an earlier run is already scheduled. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const cur = this.timers.get(key);
    if (cur && cur.at <= at) return;
    if (cur) clearTimeout(cur.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { at, timer });
  }

  get length(): number {
    return this.queue.length;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    this.queue.length = 0;
    this.queued.clear();
  }

  private pump(): void {
    while (!this.paused && !this.stopped && this.running < this.opts.workers && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.queued.delete(key);
      this.active.add(key);
      this.running++;
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    try {
      const result = await this.handler(key);
      this.backoff.reset(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      const delay = this.backoff.next(key);
      this.opts.onError(key, err, delay);
      this.addAfter(key, delay);
    } finally {
      this.active.delete(key);
      this.running--;
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
    }
  }
}
