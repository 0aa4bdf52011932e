/**
 * Watches a namespace's Runs and checks, at every event, what the apiserver's own history says:
 * no pod ever holds more than its capacity, and how often each Run was bound (per attempt).
 * Watch events are ordered by etcd revision, so the state after each event is a real snapshot.
 */
import { type Run, RunResource } from "@kruntimes/api";
import { Informer, type KubeClient, path } from "@kruntimes/kube";
import { holdsCapacity } from "../../scheduler/run-request.ts";

export class RunWatcher {
  readonly informer: Informer<Run>;
  /** Per Run: every distinct (pod, podUID, attempt) it was bound to, in order. */
  readonly binds = new Map<string, string[]>();
  private readonly holding = new Map<string, Map<string, number>>();
  maxPerPod = new Map<string, number>();
  violations: string[] = [];

  constructor(
    client: KubeClient,
    ns: string,
    private readonly capacityOf: (pod: string) => number,
  ) {
    this.informer = new Informer<Run>(client, path(RunResource, ns));
    this.informer.on({
      add: (r) => this.observe(r),
      update: (r) => this.observe(r),
      delete: (r) => this.release(r.metadata.name ?? ""),
    });
  }

  async start(): Promise<this> {
    this.informer.start();
    await this.informer.waitForSync();
    return this;
  }
  stop(): void {
    this.informer.stop();
  }

  runs(): Run[] {
    return [...this.informer.values()];
  }

  private release(name: string): void {
    for (const m of this.holding.values()) m.delete(name);
  }

  private observe(run: Run): void {
    const name = run.metadata.name ?? "";
    const a = run.status?.assignment;
    if (a && run.status?.phase === "Scheduled") {
      const id = `${a.pod}/${a.podUID}#${a.attempt}`;
      const list = this.binds.get(name) ?? [];
      if (!list.includes(id)) list.push(id);
      this.binds.set(name, list);
    }
    this.release(name);
    if (!a || !holdsCapacity(run)) return;
    const m = this.holding.get(a.pod) ?? new Map<string, number>();
    m.set(name, run.spec.resources?.requests?.runs ?? 1);
    this.holding.set(a.pod, m);
    let used = 0;
    for (const v of m.values()) used += v;
    this.maxPerPod.set(a.pod, Math.max(this.maxPerPod.get(a.pod) ?? 0, used));
    if (used > this.capacityOf(a.pod))
      this.violations.push(`${a.pod} holds ${used} > ${this.capacityOf(a.pod)}`);
  }
}
