/**
 * A Binder over an in-memory Run store with the apiserver's fence semantics (the stored phase
 * and attempt must equal what the bind was decided on). For unit tests and the benchmark only.
 */
import type { Run } from "@kruntimes/api";
import { keyOf } from "@kruntimes/kube";
import type { Binder, BindOutcome } from "../scheduler/bind/binder.ts";
import { type BindTarget, boundStatus } from "../status/run-status.ts";

export class MemoryBinder implements Binder {
  readonly stored = new Map<string, Run>();
  readonly bound: { run: string; pod: string; attempt: number }[] = [];
  /** Called with the stored Run after each successful bind (the "watch event"). */
  onBound: (run: Run) => void = () => {};
  /** Force the next binds to fail this way. */
  failNext: BindOutcome["kind"][] = [];
  private rv = 1000;

  put(run: Run): void {
    this.stored.set(keyOf(run), run);
  }

  async bind(run: Run, to: BindTarget, attempt: number): Promise<BindOutcome> {
    const forced = this.failNext.shift();
    if (forced && forced !== "bound") return { kind: forced, error: new Error(`forced ${forced}`) };
    const key = keyOf(run);
    const cur = this.stored.get(key);
    if (!cur) return { kind: "gone", error: new Error("not found") };
    if (cur.status?.phase !== run.status?.phase || cur.status?.attempt !== run.status?.attempt) {
      return { kind: "fenced", error: new Error("test operation failed") };
    }
    const next: Run = {
      ...cur,
      metadata: { ...cur.metadata, resourceVersion: String(++this.rv) },
      status: boundStatus(cur, to, attempt, 0, 0),
    };
    this.stored.set(key, next);
    this.bound.push({ run: key, pod: to.pod, attempt });
    this.onBound(next);
    return { kind: "bound" };
  }

  async read(namespace: string, name: string): Promise<Run | undefined> {
    return this.stored.get(`${namespace}/${name}`);
  }
}
