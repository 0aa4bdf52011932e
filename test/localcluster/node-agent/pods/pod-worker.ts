/**
 * Everything the agent does for one pod, as a level-triggered sync: prepare IP and volumes, run
 * init containers in order (native sidecars keep running), run app containers with the pod's
 * restart policy and crash-loop backoff, write status when it changed, and on deletion stop the
 * containers gracefully and remove the pod object.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isNotFound, type KubeClient, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { ObjectSource } from "../api/object-source.ts";
import type { Container, Pod, PodStatus } from "../api/types.ts";
import type { AgentConfig } from "../config.ts";
import { ContainerConfigError, containerArgv, containerEnv, processEnv } from "../env/container-env.ts";
import type { PodFacts } from "../env/field-ref.ts";
import type { ImageMap } from "../images/image-map.ts";
import { rfc3339Nano } from "../logs/cri-log-format.ts";
import type { IpAllocator } from "../network/ip-allocator.ts";
import { planMounts, wrapperScript } from "../runtime/mount-plan.ts";
import type { ProcessRegistry } from "../runtime/process-registry.ts";
import type { VolumeManager } from "../volumes/volume-manager.ts";
import { ContainerRunner } from "./container-runner.ts";
import { computeStatus, type PodView } from "./pod-status.ts";

export interface PodWorkerDeps {
  config: AgentConfig;
  client: KubeClient;
  objects: ObjectSource;
  images: ImageMap;
  ips: IpAllocator;
  volumes: VolumeManager;
  registry: ProcessRegistry;
  log: Logger;
  /** Ask for a sync of this pod soon (a container exited, a probe changed). */
  poke(): void;
}

export class PodWorker {
  private readonly init: ContainerRunner[];
  private readonly app: ContainerRunner[];
  readonly dir: string;
  private podIP = "";
  private readonly startTime = rfc3339Nano(Date.now()).replace(/\.\d+Z$/, "Z");
  private lastWritten = "";
  private terminating?: Promise<void>;
  done = false;

  constructor(
    public pod: Pod,
    private readonly d: PodWorkerDeps,
  ) {
    const m = pod.metadata;
    this.dir = join(d.config.stateDir, "pods", `${m.namespace}_${m.name}_${m.uid}`);
    mkdirSync(this.dir, { recursive: true });
    const mk = (c: Container) =>
      new ContainerRunner(c, `${m.namespace}/${m.name}`, join(this.dir, "logs"), d.registry, {
        changed: () => d.poke(),
        unhealthy: (why) => {
          d.log.info(
            { pod: `${m.namespace}/${m.name}`, container: c.name, why },
            "restarting unhealthy container",
          );
          void this.runnerOf(c.name)?.stop((pod.spec.terminationGracePeriodSeconds ?? 30) * 1000);
        },
      });
    this.init = (pod.spec.initContainers ?? []).map(mk);
    this.app = pod.spec.containers.map(mk);
    // Restart counts survive an agent restart, as a kubelet's survive in the runtime.
    for (const s of [
      ...(pod.status?.initContainerStatuses ?? []),
      ...(pod.status?.containerStatuses ?? []),
    ]) {
      const r = this.runnerOf(s.name);
      if (r && s.containerID) r.restartCount = s.restartCount + 1;
    }
  }

  runnerOf(name: string): ContainerRunner | undefined {
    return [...this.init, ...this.app].find((r) => r.spec.name === name);
  }

  private get facts(): PodFacts {
    return { podIP: this.podIP, hostIP: "127.0.0.1", allocatable: this.d.config.allocatable };
  }

  private get key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
  }

  /** One pass; returns when to come back (ms) if something is time-based (backoff). */
  async sync(): Promise<number | undefined> {
    if (this.pod.metadata.deletionTimestamp) {
      this.terminating ??= this.terminate();
      return undefined;
    }
    if (!this.podIP) this.podIP = this.d.ips.allocate(this.pod.metadata.uid!);
    const vols = await this.d.volumes.prepare(this.pod, this.dir, this.facts);
    let requeue: number | undefined;
    const soon = (ms: number) => {
      requeue = requeue === undefined ? ms : Math.min(requeue, ms);
    };
    const policy = this.pod.spec.restartPolicy ?? "Always";
    let failed: string | undefined;

    let initDone = true;
    for (const r of this.init) {
      const sidecar = r.spec.restartPolicy === "Always";
      if (sidecar) {
        if (!r.running) await this.ensureStarted(r, vols, "Always", soon);
        if (!r.started) initDone = false;
        if (!initDone) break;
        continue;
      }
      if (r.state.terminated?.exitCode === 0 && !r.running) continue;
      initDone = false;
      if (r.running) break;
      if (r.state.terminated && policy === "Never") {
        failed = `init container ${r.spec.name} failed with exit code ${r.state.terminated.exitCode}`;
        break;
      }
      await this.ensureStarted(r, vols, "OnFailure", soon);
      break;
    }
    if (initDone) {
      for (const r of this.app) {
        if (!r.running) await this.ensureStarted(r, vols, policy, soon);
        else if (r.state.waiting) r.waiting("PodInitializing");
      }
    } else {
      for (const r of this.app) if (!r.everStarted) r.waiting("PodInitializing");
    }
    await this.writeStatus(initDone, failed);
    return requeue;
  }

  private finalFor(r: ContainerRunner, policy = this.pod.spec.restartPolicy ?? "Always"): boolean {
    const t = r.state.terminated;
    if (!t) return false;
    return policy === "Never" || (policy === "OnFailure" && t.exitCode === 0);
  }

  private async ensureStarted(
    r: ContainerRunner,
    vols: Awaited<ReturnType<VolumeManager["prepare"]>>,
    policy: "Always" | "OnFailure" | "Never",
    soon: (ms: number) => void,
  ): Promise<void> {
    if (r.running) return;
    if (r.state.terminated && this.finalFor(r, policy)) return;
    if (r.everStarted && r.nextStartAtMs === 0) {
      const ms = r.armBackoff(this.d.config.restartBackoffInitialMs, this.d.config.restartBackoffMaxMs);
      r.waiting(
        "CrashLoopBackOff",
        `back-off ${Math.round(ms / 1000)}s restarting failed container=${r.spec.name} pod=${this.key}`,
      );
    }
    const wait = r.nextStartAtMs - Date.now();
    if (wait > 0) {
      soon(wait);
      return;
    }
    r.nextStartAtMs = 0;
    const image = this.d.images.resolve(r.spec.image ?? "");
    if (!image) {
      r.waiting("ImageNotMapped", `image "${r.spec.image}" is not in ${this.d.images.file}; add it there`);
      soon(5000);
      return;
    }
    try {
      const vars = await containerEnv(this.pod, r.spec, this.facts, this.d.objects, this.d.config);
      const hostname = this.pod.spec.hostname ?? this.pod.metadata.name ?? "pod";
      const env = processEnv(image.env, vars, hostname);
      env.PATH = `${join(process.execPath, "..")}:${env.PATH ?? process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`;
      const binds = planMounts(r.spec.volumeMounts ?? [], vols, vars);
      const startErrorFile = join(this.dir, `start-error-${r.spec.name}`);
      const wrapper = wrapperScript({
        binds,
        hostname,
        workingDir: r.spec.workingDir ?? image.workingDir,
        startErrorFile,
      });
      r.start({
        image,
        argv: containerArgv(image, r.spec, vars),
        env,
        wrapper,
        startErrorFile,
        podIP: this.podIP,
      });
      this.d.log.info(
        { pod: this.key, container: r.spec.name, restarts: r.restartCount },
        "container started",
      );
    } catch (e) {
      if (!(e instanceof ContainerConfigError) && !(e instanceof Error && e.name === "MountError")) throw e;
      r.waiting("CreateContainerConfigError", e.message);
      soon(2000);
    }
  }

  private async writeStatus(initDone: boolean, failed?: string): Promise<void> {
    const view: PodView = {
      pod: this.pod,
      podIP: this.podIP,
      startTime: this.startTime,
      sandboxReady: true,
      initDone,
      init: this.init,
      app: this.app,
      finalFor: (r) => this.finalFor(r),
      failedMessage: failed,
    };
    const status = computeStatus(view);
    const sig = JSON.stringify({ ...status, conditions: status.conditions?.map((c) => [c.type, c.status]) });
    if (sig === this.lastWritten) return;
    await this.patchStatus(status);
    this.lastWritten = sig;
  }

  private async patchStatus(status: PodStatus): Promise<void> {
    const m = this.pod.metadata;
    try {
      this.pod = await this.d.client.patch<Pod>(
        path(R.pods, m.namespace, m.name, "status"),
        { status },
        "strategic",
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Graceful deletion: stop every container within the grace period, final status, delete. */
  private async terminate(): Promise<void> {
    const m = this.pod.metadata;
    const graceMs =
      (m.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    await Promise.all(this.app.map((r) => r.stop(graceMs)));
    await Promise.all(this.init.map((r) => r.stop(2000)));
    try {
      await this.writeStatus(true);
      await this.d.client.delete(path(R.pods, m.namespace, m.name), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid: m.uid },
      });
    } catch (e) {
      if (!isNotFound(e) && !(e instanceof Error && "code" in e && (e as { code: number }).code === 409)) {
        this.terminating = undefined;
        throw e;
      }
    }
    this.d.log.info({ pod: this.key }, "pod terminated and removed");
    this.cleanup();
  }

  /** The pod object is gone: no grace left, kill and forget. */
  cleanup(): void {
    for (const r of [...this.init, ...this.app]) r.kill();
    this.d.ips.release(this.pod.metadata.uid!);
    this.d.volumes.forget(this.pod.metadata.uid!);
    this.done = true;
    rmSync(join(this.dir, "volumes"), { recursive: true, force: true });
  }

  async shutdown(graceMs: number): Promise<void> {
    await Promise.all([...this.app, ...this.init].map((r) => r.stop(graceMs)));
  }
}
