/**
 * What runs for one pod (keyed by uid): its "sandbox" (loopback IP, /etc/hosts, volume
 * directories) and its containers. `drive` is level-triggered: it looks at the pod spec and at
 * what is running, starts what should run (init containers in order, sidecars, app containers
 * per restartPolicy and backoff), and says when to look again.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { apiTime } from "../api/api-time.ts";
import type { Pod } from "../api/types.ts";
import { VolumeError } from "../volumes/payloads.ts";
import { PodVolumes } from "../volumes/pod-volumes.ts";
import { ContainerRuntime, type PodSandbox } from "./container-runtime.ts";
import type { PodContext } from "./pod-context.ts";
import { isTerminalPhase } from "./pod-phase.ts";

const RETRY_START_MS = 5000;

export function hostsFile(ip: string, hostname: string, pod: Pod): string {
  const fqdn = pod.spec.subdomain
    ? ` ${hostname}.${pod.spec.subdomain}.${pod.metadata.namespace}.svc.cluster.local`
    : "";
  return `# Kubernetes-managed hosts file (kruntimes local node agent).
127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
${ip}\t${hostname}${fqdn}
`;
}

export class PodRuntime {
  readonly sandbox: PodSandbox;
  readonly volumes: PodVolumes;
  readonly init: ContainerRuntime[];
  readonly app: ContainerRuntime[];
  readonly startTime = apiTime();
  sandboxReady = false;
  sandboxMessage: string | undefined;
  /** Set once the pod reached Succeeded/Failed: nothing is started again. */
  terminal = false;
  /** Set when a deletion (or vanishing) began stopping the pod; resolves when all processes are gone. */
  stopping: Promise<void> | undefined;
  stopped = false;
  /** spec.activeDeadlineSeconds passed: the pod was stopped and is Failed with DeadlineExceeded. */
  deadlineExceeded = false;
  /** All regular init containers completed and sidecars started once; they never gate again. */
  initDone: boolean;
  private lastVolumeSync = 0;

  constructor(
    readonly pod: Pod,
    ip: string,
    podDir: string,
    private readonly ctx: PodContext,
  ) {
    const hostname = (pod.spec.hostname || pod.metadata.name || "pod").slice(0, 63);
    this.sandbox = {
      uid: pod.metadata.uid!,
      podKey: `${pod.metadata.namespace}/${pod.metadata.name}`,
      podDir,
      facts: { podIP: ip, hostIP: ctx.hostIP, allocatable: ctx.allocatable },
      hostname,
      hostsFile: join(podDir, "etc-hosts"),
      volumes: new Map(),
      terminationGracePeriodSeconds: pod.spec.terminationGracePeriodSeconds ?? 30,
    };
    this.volumes = new PodVolumes(podDir);
    this.init = (pod.spec.initContainers ?? []).map(
      (c) => new ContainerRuntime(c, c.restartPolicy === "Always" ? "sidecar" : "init", ctx, this.sandbox),
    );
    this.app = pod.spec.containers.map((c) => new ContainerRuntime(c, "app", ctx, this.sandbox));
    const prior = pod.status ?? {};
    for (const c of this.init) {
      const st = prior.initContainerStatuses?.find((s) => s.name === c.spec.name);
      if (st) c.seed(st);
    }
    for (const c of this.app) {
      const st = prior.containerStatuses?.find((s) => s.name === c.spec.name);
      if (st) c.seed(st);
    }
    this.terminal = isTerminalPhase(prior.phase);
    // App containers that ran before (an agent restart) mean initialization was complete.
    this.initDone = this.init.length === 0 || this.app.some((c) => c.exited !== undefined);
    // Until the init containers are through, app containers wait with PodInitializing, as in kubelet.
    if (!this.initDone) for (const c of this.app) c.waiting = { reason: "PodInitializing" };
  }

  get ip(): string {
    return this.sandbox.facts.podIP;
  }
  get all(): ContainerRuntime[] {
    return [...this.init, ...this.app];
  }
  get anyRunning(): boolean {
    return this.all.some((c) => c.running);
  }

  /** Writes /etc/hosts and (re)materializes volumes; false while a volume cannot be set up. */
  private async ensureSandbox(pod: Pod, resyncMs: number): Promise<boolean> {
    if (this.sandboxReady && Date.now() - this.lastVolumeSync < resyncMs) return true;
    mkdirSync(this.sandbox.podDir, { recursive: true });
    writeFileSync(this.sandbox.hostsFile, hostsFile(this.ip, this.sandbox.hostname, pod));
    try {
      const dirs = await this.volumes.materialize(pod.spec.volumes ?? [], {
        pod,
        facts: this.sandbox.facts,
        objects: this.ctx.objects,
        claims: this.ctx.claims,
        tokens: this.ctx.tokens,
      });
      for (const [k, v] of dirs) this.sandbox.volumes.set(k, v);
    } catch (e) {
      if (!(e instanceof VolumeError)) throw e;
      this.sandboxMessage = `MountVolume.SetUp failed: ${e.message}`;
      this.ctx.events.warn(pod, "FailedMount", this.sandboxMessage);
      for (const c of this.all)
        if (!c.running && !c.exited)
          c.waiting = { reason: "ContainerCreating", message: this.sandboxMessage };
      return this.sandboxReady;
    }
    this.sandboxMessage = undefined;
    this.sandboxReady = true;
    this.lastVolumeSync = Date.now();
    return true;
  }

  /** Starts `c` unless its backoff holds it; returns the delay to look again, if any. */
  private async startOrWait(c: ContainerRuntime, pod: Pod): Promise<number | undefined> {
    const wait = c.backoffRemainingMs();
    if (wait > 0) return wait;
    return (await c.start(pod)) ? undefined : RETRY_START_MS;
  }

  /** One level-triggered pass; returns the delay after which the pod wants another pass. */
  async drive(pod: Pod, resyncMs: number): Promise<number> {
    let next = resyncMs;
    const want = (ms: number | undefined) => {
      if (ms !== undefined) next = Math.min(next, ms);
    };
    if (this.terminal || this.stopping) return next;
    if (!(await this.ensureSandbox(pod, resyncMs))) return Math.min(next, RETRY_START_MS);
    const policy = pod.spec.restartPolicy ?? "Always";

    // Init containers, in order: a regular one must complete; a sidecar must have started.
    for (const c of this.init) {
      if (c.kind === "sidecar") {
        if (!c.running) {
          c.restartPending = c.exited !== undefined;
          want(await this.startOrWait(c, pod));
        }
        if (!this.initDone && !c.started) return next;
        continue;
      }
      if (this.initDone || c.succeeded) continue;
      if (c.running) return next;
      if (c.exited && policy === "Never") {
        this.finish();
        return next;
      }
      c.restartPending = c.exited !== undefined;
      want(await this.startOrWait(c, pod));
      return next;
    }
    if (!this.initDone) {
      this.initDone = true;
      for (const c of this.app)
        if (c.waiting.reason === "PodInitializing") c.waiting = { reason: "ContainerCreating" };
    }

    let active = 0;
    for (const c of this.app) {
      if (c.running) {
        active++;
        continue;
      }
      const restart = !c.exited || policy === "Always" || (policy === "OnFailure" && c.exited.exitCode !== 0);
      c.restartPending = restart && c.exited !== undefined;
      if (!restart) continue;
      active++;
      want(await this.startOrWait(c, pod));
    }
    // Every app container is done for good: stop the sidecars, the pod is terminal.
    if (active === 0) this.finish();
    return next;
  }

  /**
   * The pod is done: nothing starts again, and the sidecars are stopped in reverse order. That
   * runs beside the sync (their exits sync the pod again), so the status says so meanwhile.
   */
  private finish(): void {
    this.terminal = true;
    const sidecars = [...this.init].reverse();
    for (const c of sidecars) c.restartPending = false;
    const grace = this.sandbox.terminationGracePeriodSeconds * 1000;
    void (async () => {
      for (const c of sidecars) if (c.running) await c.kill(grace, "all app containers completed", false);
    })();
  }
}
