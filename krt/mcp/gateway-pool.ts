/**
 * The gateway a long-lived `krt mcp` calls, found once and reused: locating it costs a few API
 * calls (and maybe a port-forward), so it is not done per tool call. It is located again after
 * `ttlMs` (gateway pods come and go, a projected token file is rotated) and at once after a call
 * could not reach it. A replaced gateway (say, its port-forward) is closed only when the calls
 * still using it are done.
 */

export interface PooledTarget {
  close(): void;
}

interface Entry<G> {
  gw: Promise<G>;
  at: number;
  users: number;
  retired: boolean;
}

export class GatewayPool<G extends { target: PooledTarget }> {
  private current: Entry<G> | undefined;
  private closed = false;

  constructor(
    private readonly locate: () => Promise<G>,
    private readonly opts: {
      ttlMs: number;
      /** True when the error says the gateway could not be reached (locate again next time). */
      unreachable: (e: unknown) => boolean;
      now?: () => number;
    },
  ) {}

  /** Runs `fn` with the current gateway, locating it first when there is none or it is stale. */
  async use<T>(fn: (gw: G) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error("the gateway pool is closed");
    const entry = this.entry();
    entry.users++;
    try {
      const gw = await entry.gw;
      return await fn(gw);
    } catch (e) {
      if (this.opts.unreachable(e)) this.retire(entry);
      throw e;
    } finally {
      entry.users--;
      if (entry.retired && entry.users === 0) void release(entry);
    }
  }

  /** Closes the current gateway (its port-forward) once idle; later `use` calls fail. */
  close(): void {
    this.closed = true;
    if (this.current) this.retire(this.current);
  }

  private entry(): Entry<G> {
    const now = (this.opts.now ?? Date.now)();
    const cur = this.current;
    if (cur && now - cur.at < this.opts.ttlMs) return cur;
    if (cur) this.retire(cur);
    const gw = this.locate();
    const fresh: Entry<G> = { gw, at: now, users: 0, retired: false };
    // A failed locate is not kept: the next call tries again.
    gw.catch(() => {
      if (this.current === fresh) this.current = undefined;
    });
    this.current = fresh;
    return fresh;
  }

  private retire(entry: Entry<G>): void {
    if (this.current === entry) this.current = undefined;
    if (entry.retired) return;
    entry.retired = true;
    if (entry.users === 0) void release(entry);
  }
}

async function release<G extends { target: PooledTarget }>(entry: Entry<G>): Promise<void> {
  try {
    (await entry.gw).target.close();
  } catch {
    // It was never located: nothing to close.
  }
}
