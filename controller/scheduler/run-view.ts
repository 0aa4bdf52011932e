/**
 * The scheduler's view of a Run: the informer's copy, unless this process has just written the
 * Run's status and the informer has not caught up yet — then the write's response, so the next
 * fenced write tests what is really stored. Also serializes the controller's own status writes
 * of a Pending Run with its bind: a cycle that meets a waiting-reason write in flight is
 * deferred until the write returns, instead of racing it into a fenced (wasted) bind.
 */
import type { Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Clock } from "../util/clock.ts";

export interface RunSource {
  get(key: string): Run | undefined;
}

/** A response older than this is no longer trusted over the informer (a missed event). */
const FRESH_TTL_MS = 10_000;

export class RunView implements RunSource {
  private readonly written = new Map<string, { run: Run; atMs: number }>();
  /** Keys with a write in flight → resourceVersions the informer delivered meanwhile. */
  private readonly writing = new Map<string, Set<string>>();
  private readonly deferred = new Set<string>();

  constructor(
    private readonly informer: RunSource,
    private readonly clock: Clock,
  ) {}

  get(key: string): Run | undefined {
    const w = this.written.get(key);
    if (w && this.clock.now() - w.atMs < FRESH_TTL_MS) return w.run;
    if (w) this.written.delete(key);
    return this.informer.get(key);
  }

  /** An informer event: once it shows our write, the informer is authoritative again. */
  observed(run: Run): void {
    const key = keyOf(run);
    const rv = run.metadata.resourceVersion ?? "";
    this.writing.get(key)?.add(rv);
    if (this.written.get(key)?.run.metadata.resourceVersion === rv) this.written.delete(key);
  }

  /** Drops our copy (a fence failed: what we wrote is no longer what is stored). */
  forget(key: string): void {
    this.written.delete(key);
  }

  isWriting(key: string): boolean {
    return this.writing.has(key);
  }

  beginWrite(key: string): void {
    this.writing.set(key, new Set());
  }

  /**
   * Ends a write; returns true when a cycle was deferred behind it (the caller requeues). The
   * response is kept only if the informer has not delivered it yet — a watch event can beat the
   * HTTP response, and then the informer is already as new (or newer) and must not be shadowed.
   */
  endWrite(key: string, response: Run | undefined): boolean {
    const seen = this.writing.get(key);
    this.writing.delete(key);
    const rv = response?.metadata.resourceVersion;
    if (response && rv !== undefined && !seen?.has(rv)) {
      this.written.set(key, { run: response, atMs: this.clock.now() });
    }
    return this.deferred.delete(key);
  }

  defer(key: string): void {
    this.deferred.add(key);
  }
}
