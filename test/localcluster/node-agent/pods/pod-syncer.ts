/**
 * The pod reconciler, keyed by pod UID (a same-named replacement is another pod): it reads the
 * latest pod from the informer's view and the runtime's facts, never an event, and decides:
 *   - pod gone         → kill what still runs (briefly: there is no object left to report to), clean up;
 *   - being deleted    → graceful stop (preStop, SIGTERM, grace, SIGKILL), final status, delete the object;
 *   - otherwise        → drive the runtime (start/restart containers), write status if it changed.
 * Long waits (a grace period) run beside the queue and enqueue the pod again when done.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../api/types.ts";
import { boundAddresses } from "../network/bound-addresses.ts";
import type { IpAllocator } from "../network/ip-allocator.ts";
import type { SyncResult } from "../queue/work-queue.ts";
import type { ServiceAccountTokens } from "../volumes/service-account-tokens.ts";
import type { PodContext } from "./pod-context.ts";
import { isTerminalPhase } from "./pod-phase.ts";
import { PodRuntime } from "./pod-runtime.ts";
import type { PodStatusWriter } from "./pod-status-writer.ts";
import { stopPod } from "./pod-termination.ts";

/** A pod whose object vanished gets at most this long after SIGTERM. */
const VANISHED_GRACE_MS = 2000;

export interface PodSyncerDeps {
  ctx: PodContext;
  ips: IpAllocator;
  writer: PodStatusWriter;
  tokens: ServiceAccountTokens;
  stateDir: string;
  resyncMs: number;
}

export class PodSyncer {
  /** The informer's view, indexed by UID. */
  private readonly pods = new Map<string, Pod>();
  private readonly runtimes = new Map<string, PodRuntime>();

  constructor(private readonly d: PodSyncerDeps) {}

  observe(pod: Pod): void {
    this.pods.set(pod.metadata.uid!, pod);
  }
  vanished(pod: Pod): void {
    this.pods.delete(pod.metadata.uid!);
  }
  /** UIDs to sync: every known pod and every runtime (a runtime without pod must be stopped). */
  keys(): string[] {
    return [...new Set([...this.pods.keys(), ...this.runtimes.keys()])];
  }

  /** After the first list: keep the IPs pods already report, and drop directories of pods long gone. */
  adoptExisting(): void {
    for (const p of this.pods.values()) {
      if (p.status?.podIP && !isTerminalPhase(p.status.phase))
        this.d.ips.reserve(p.status.podIP, p.metadata.uid!);
    }
    const root = join(this.d.stateDir, "pods");
    if (!existsSync(root)) return;
    for (const name of readdirSync(root)) {
      const uid = name.slice(name.lastIndexOf("_") + 1);
      // Logs stay for post-mortems; volume contents (secrets, tokens) do not.
      if (!this.pods.has(uid)) rmSync(join(root, name, "volumes"), { recursive: true, force: true });
    }
  }

  /** The runtime of the newest pod with this namespace/name (the log endpoint's lookup). */
  find(namespace: string, name: string): PodRuntime | undefined {
    let hit: PodRuntime | undefined;
    for (const rt of this.runtimes.values()) {
      if (rt.pod.metadata.namespace === namespace && rt.pod.metadata.name === name) {
        if (!hit || (rt.pod.metadata.creationTimestamp ?? "") >= (hit.pod.metadata.creationTimestamp ?? ""))
          hit = rt;
      }
    }
    return hit;
  }

  podDir(pod: Pod): string {
    const m = pod.metadata;
    return join(this.d.stateDir, "pods", `${m.namespace}_${m.name}_${m.uid}`);
  }

  async sync(uid: string): Promise<SyncResult> {
    const pod = this.pods.get(uid);
    let rt = this.runtimes.get(uid);
    if (!pod) {
      if (!rt) return undefined;
      if (!rt.stopped) {
        this.d.ctx.log.info({ pod: rt.sandbox.podKey }, "pod object gone; killing its containers");
        const grace = Math.min(VANISHED_GRACE_MS, rt.sandbox.terminationGracePeriodSeconds * 1000);
        rt.stopping ??= stopPod(rt, grace, false, "the pod object was deleted").then(() =>
          this.d.ctx.enqueue(uid),
        );
        return undefined;
      }
      this.cleanup(rt);
      return undefined;
    }
    if (!rt) {
      // A pod that finished before this agent started has nothing left to run.
      if (isTerminalPhase(pod.status?.phase) && !pod.metadata.deletionTimestamp) return undefined;
      rt = this.create(pod);
    }
    if (pod.metadata.deletionTimestamp) return this.terminate(rt, pod);
    const deadlineIn = this.deadlineRemainingMs(rt, pod);
    if (deadlineIn !== undefined && deadlineIn <= 0 && !rt.terminal) {
      rt.deadlineExceeded = true;
      const grace = (pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
      rt.stopping ??= stopPod(rt, grace, true, "the pod's activeDeadlineSeconds passed").then(() =>
        this.d.ctx.enqueue(uid),
      );
    }
    const next = await rt.drive(pod, this.d.resyncMs);
    await this.d.writer.write(rt, pod);
    return { requeueAfterMs: deadlineIn !== undefined && deadlineIn > 0 ? Math.min(next, deadlineIn) : next };
  }

  /** Time left before spec.activeDeadlineSeconds (counted from status.startTime), if the pod has one. */
  private deadlineRemainingMs(rt: PodRuntime, pod: Pod): number | undefined {
    const secs = pod.spec.activeDeadlineSeconds;
    if (secs === undefined) return undefined;
    return Date.parse(pod.status?.startTime ?? rt.startTime) + secs * 1000 - Date.now();
  }

  private create(pod: Pod): PodRuntime {
    const uid = pod.metadata.uid!;
    const prior = pod.status?.podIP;
    let ip = prior && this.d.ips.reserve(prior, uid) ? prior : undefined;
    if (!ip) {
      const bound = boundAddresses();
      ip = this.d.ips.allocate(uid, (a) => bound.has(a));
    }
    const dir = this.podDir(pod);
    mkdirSync(dir, { recursive: true });
    const rt = new PodRuntime(pod, ip, dir, this.d.ctx);
    this.runtimes.set(uid, rt);
    return rt;
  }

  private async terminate(rt: PodRuntime, pod: Pod): Promise<SyncResult> {
    if (!rt.stopped) {
      const graceS = pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30;
      const uid = pod.metadata.uid!;
      rt.stopping ??= stopPod(rt, graceS * 1000, true, "the pod is being deleted").then(() =>
        this.d.ctx.enqueue(uid),
      );
      // Containers exit one by one meanwhile; each exit syncs and reports.
      await this.d.writer.write(rt, pod);
      return undefined;
    }
    await this.d.writer.write(rt, pod);
    await this.d.writer.remove(pod);
    return undefined;
  }

  private cleanup(rt: PodRuntime): void {
    const uid = rt.sandbox.uid;
    this.d.ips.release(uid);
    this.d.tokens.forget(uid);
    this.d.writer.forget(uid);
    this.d.ctx.events.forget(uid);
    rt.volumes.remove();
    this.runtimes.delete(uid);
  }

  /** Agent shutdown: stop every pod's processes (SIGTERM, then SIGKILL after `graceMs`), report nothing. */
  async shutdown(graceMs: number): Promise<void> {
    await Promise.all(
      [...this.runtimes.values()].map(
        (rt) => rt.stopping ?? stopPod(rt, graceMs, false, "the node agent is stopping"),
      ),
    );
  }
}
