/**
 * Watches the objects one benchmark step creates (by label) and records, for each, the first
 * event in which it is done, with the wall-clock µs the event arrived. One watch, re-established
 * from the last resourceVersion when the server closes it; nothing polls.
 */
import { isGone, type KubeClient, type KubeObject, watchStream } from "@kruntimes/kube";

export interface Seen<T> {
  object: T;
  seenMicros: number;
}

export class DoneCollector<T extends KubeObject> {
  readonly done = new Map<string, Seen<T>>();
  private readonly abort = new AbortController();
  /** The waiters of waitFor (several may wait at once). */
  private readonly wakers = new Set<() => void>();
  private failure?: unknown;
  private loop?: Promise<void>;

  constructor(
    private readonly client: KubeClient,
    private readonly collectionPath: string,
    private readonly labelSelector: string,
    private readonly isDone: (o: T) => boolean,
    private readonly now: () => number,
    /** Sees every version as it arrives, with its arrival µs (e.g. to time intermediate states). */
    private readonly onVersion?: (o: T, micros: number) => void,
  ) {}

  /** Lists (for a resourceVersion) and starts watching; resolves once the watch is requested. */
  async start(): Promise<void> {
    const list = await this.client.list<T>(this.collectionPath, { labelSelector: this.labelSelector });
    for (const o of list.items) this.observe(o);
    this.loop = this.run(list.metadata.resourceVersion);
  }

  private observe(o: T): void {
    this.onVersion?.(o, this.now());
    const name = o.metadata.name ?? "";
    if (this.done.has(name) || !this.isDone(o)) return;
    this.done.set(name, { object: o, seenMicros: this.now() });
    for (const w of [...this.wakers]) w();
  }

  private async run(rv: string | undefined): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        for await (const ev of watchStream<T>(
          this.client,
          this.collectionPath,
          { labelSelector: this.labelSelector, resourceVersion: rv },
          this.abort.signal,
        )) {
          rv = ev.object.metadata.resourceVersion ?? rv;
          if (ev.type === "ADDED" || ev.type === "MODIFIED") this.observe(ev.object);
        }
      } catch (e) {
        if (this.abort.signal.aborted) return;
        if (!isGone(e)) {
          this.failure = e;
          for (const w of [...this.wakers]) w();
          return;
        }
        const list = await this.client.list<T>(this.collectionPath, { labelSelector: this.labelSelector });
        for (const o of list.items) this.observe(o);
        rv = list.metadata.resourceVersion;
      }
    }
  }

  /** Resolves when `count` objects are done; rejects on a watch failure, on `stop()` or when `signal` aborts. */
  async waitFor(count: number, signal: AbortSignal, onProgress?: (done: number) => void): Promise<void> {
    while (this.done.size < count) {
      if (this.failure) throw this.failure;
      if (signal.aborted) throw signal.reason ?? new Error("aborted");
      if (this.abort.signal.aborted) throw new Error("the collector was stopped");
      onProgress?.(this.done.size);
      // Woken by each done object; the timer only refreshes the progress display.
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", wake);
          this.abort.signal.removeEventListener("abort", wake);
          this.wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, 250);
        this.wakers.add(wake);
        signal.addEventListener("abort", wake);
        this.abort.signal.addEventListener("abort", wake);
      });
    }
    onProgress?.(this.done.size);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }
}
