/**
 * List-then-watch cache of one resource, kept level-true: a watch that ends is resumed from the
 * last resourceVersion, an expired one (410) relists and reports what changed meanwhile.
 * Consumers see a typed lifecycle (synced, relisted, error) next to object events.
 */
import type { KubeClient, KubeObject } from "./client.ts";
import { isGone } from "./errors.ts";
import { watchStream } from "./watch.ts";

export interface InformerHandlers<T> {
  add?(obj: T): void;
  update?(obj: T, old: T): void;
  delete?(obj: T): void;
  /** The initial list is in the cache. */
  synced?(): void;
  /** A relist after an expired watch replaced the cache. */
  relisted?(): void;
  error?(err: unknown): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  labelSelector?: string;
  fieldSelector?: string;
  /** Watch timeout the server closes after; a fresh watch follows at once. */
  watchTimeoutSeconds?: number;
  /** Wait before retrying after an error. */
  retryDelayMs?: number;
  /** A watch whose response headers take longer fails and is retried (default 30 s). */
  watchHeadersTimeoutMs?: number;
  /**
   * Applied to every object before it is cached or handed to handlers (as client-go's
   * SetTransform): e.g. `withoutManagedFields`, for a cache that never reads them.
   */
  transform?: (obj: T) => T;
}

/** Drops `metadata.managedFields`: one entry per writer, listing every field it set. */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
}

export const keyOf = (o: KubeObject) =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? "");

export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private abort = new AbortController();
  private resourceVersion = "";
  private running = false;
  private syncedOnce = false;
  private syncWaiters: (() => void)[] = [];

  constructor(
    private readonly client: KubeClient,
    private readonly path: string,
    private readonly opts: InformerOptions<T> = {},
  ) {}

  on(h: InformerHandlers<T>): this {
    this.handlers.push(h);
    return this;
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }
  values(): IterableIterator<T> {
    return this.store.values();
  }
  get size(): number {
    return this.store.size;
  }
  get hasSynced(): boolean {
    return this.syncedOnce;
  }

  /** Resolves once the first list is cached. */
  waitForSync(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    return new Promise((r) => this.syncWaiters.push(r));
  }

  start(): this {
    if (this.running) return this;
    this.running = true;
    this.abort = new AbortController();
    void this.loop();
    return this;
  }

  stop(): void {
    this.running = false;
    this.abort.abort();
  }

  private emit<K extends keyof InformerHandlers<T>>(
    k: K,
    ...args: Parameters<NonNullable<InformerHandlers<T>[K]>>
  ) {
    for (const h of this.handlers) {
      try {
        (h[k] as ((...a: unknown[]) => void) | undefined)?.(...args);
      } catch (e) {
        if (k !== "error") this.emit("error", e);
      }
    }
  }

  private async relist(): Promise<void> {
    const list = await this.client.list<T>(this.path, {
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
    });
    const seen = new Set<string>();
    const transform = this.opts.transform;
    for (const raw of list.items) {
      const item = transform ? transform(raw) : raw;
      const k = keyOf(item);
      seen.add(k);
      const old = this.store.get(k);
      this.store.set(k, item);
      if (!old) this.emit("add", item);
      else if (old.metadata.resourceVersion !== item.metadata.resourceVersion) this.emit("update", item, old);
    }
    for (const [k, old] of this.store) {
      if (!seen.has(k)) {
        this.store.delete(k);
        this.emit("delete", old);
      }
    }
    this.resourceVersion = list.metadata.resourceVersion ?? "";
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      this.emit("synced");
      for (const w of this.syncWaiters.splice(0)) w();
    } else {
      this.emit("relisted");
    }
  }

  private async loop(): Promise<void> {
    let needList = true;
    while (this.running) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        const events = watchStream<T>(
          this.client,
          this.path,
          {
            resourceVersion: this.resourceVersion,
            labelSelector: this.opts.labelSelector,
            fieldSelector: this.opts.fieldSelector,
            timeoutSeconds: this.opts.watchTimeoutSeconds ?? 300,
          },
          this.abort.signal,
          this.opts.watchHeadersTimeoutMs ?? 30_000,
        );
        for await (const ev of events) {
          const obj =
            this.opts.transform && ev.type !== "BOOKMARK" ? this.opts.transform(ev.object) : ev.object;
          if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
          if (ev.type === "BOOKMARK") continue;
          const k = keyOf(obj);
          const old = this.store.get(k);
          if (ev.type === "DELETED") {
            this.store.delete(k);
            this.emit("delete", obj);
          } else {
            this.store.set(k, obj);
            if (old) this.emit("update", obj, old);
            else this.emit("add", obj);
          }
        }
      } catch (e) {
        if (!this.running) return;
        if (isGone(e)) {
          needList = true;
          continue;
        }
        this.emit("error", e);
        needList = true;
        await Bun.sleep(this.opts.retryDelayMs ?? 500);
      }
    }
  }
}
