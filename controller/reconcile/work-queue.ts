/**
 * A keyed work queue in client-go's shape: a key is queued at most once, a key being processed
 * is not handed to a second worker (an add while it runs queues it again after `done`), delayed
 * adds wait in one heap behind one timer, and failures back off per key exponentially.
 */
import { KeyedHeap } from "../util/heap.ts";

export interface WorkQueueOptions {
  /** First backoff delay; doubles per consecutive failure of the key. Default 100 ms. */
  baseBackoffMs?: number;
  /** Upper bound of the backoff delay. Default 60 s. */
  maxBackoffMs?: number;
}

interface Delayed {
  key: string;
  at: number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new KeyedHeap<Delayed>(
    (d) => d.key,
    (a, b) => a.at < b.at,
  );
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(opts: WorkQueueOptions = {}) {
    this.baseBackoffMs = opts.baseBackoffMs ?? 100;
    this.maxBackoffMs = opts.maxBackoffMs ?? 60_000;
  }

  /** Keys waiting to be processed (not counting delayed ones). */
  get length(): number {
    return this.queue.length - this.head;
  }
  get delayedLength(): number {
    return this.delayed.size;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.delayed.remove(key);
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const w = this.waiters.shift();
    if (w) {
      this.dirty.delete(key);
      this.processing.add(key);
      w(key);
      return;
    }
    this.queue.push(key);
  }

  /** Adds the key after `ms`; an earlier pending delayed add of the key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    if (this.dirty.has(key)) return;
    const at = Date.now() + ms;
    const cur = this.delayed.get(key);
    if (cur && cur.at <= at) return;
    this.delayed.push({ key, at });
    this.arm();
  }

  /** Adds the key after its next backoff delay. */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, this.backoffFor(n));
  }

  backoffFor(failures: number): number {
    return Math.min(this.maxBackoffMs, this.baseBackoffMs * 2 ** Math.min(failures, 30));
  }

  /** Clears the key's failure count (call after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key; resolves undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    const key = this.tryGet();
    if (key !== undefined || this.shuttingDown) return Promise.resolve(key);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The next key if one is queued, without waiting. */
  tryGet(): string | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++] as string;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  shutdown(): void {
    this.shuttingDown = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private arm(): void {
    const next = this.delayed.peek();
    if (!next) return;
    if (this.timer && this.timerAt <= next.at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next.at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, next.at - Date.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    for (let d = this.delayed.peek(); d && d.at <= now; d = this.delayed.peek()) {
      this.delayed.pop();
      this.add(d.key);
    }
    this.arm();
  }
}
