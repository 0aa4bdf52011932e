/**
 * A bounded cache whose entries expire: each entry carries its own TTL (allowed decisions live
 * longer than denials), and at most `maxSize` entries are kept, the least recently used dropped
 * first. A Map keeps insertion order, so re-inserting on a hit is the LRU bookkeeping.
 */
export interface TtlCacheOptions {
  maxSize: number;
  /** Milliseconds clock; injectable for tests. */
  now?: () => number;
}

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly now: () => number;

  constructor(private readonly opts: TtlCacheOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.expires <= this.now()) return undefined;
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0 || this.opts.maxSize <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + ttlMs });
    while (this.entries.size > this.opts.maxSize) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
