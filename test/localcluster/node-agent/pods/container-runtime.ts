/**
 * One container of a pod across its attempts: starting an attempt (image map, env, mounts,
 * process), its probes, its exit, restart backoff, and the kubelet-style ContainerStatus.
 * Whether an exited container restarts is the pod's decision (restartPolicy); this class keeps
 * the facts and the backoff clock.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { apiTime } from "../api/api-time.ts";
import type {
  Container,
  ContainerStateTerminated,
  ContainerStateWaiting,
  ContainerStatus,
  Pod,
} from "../api/types.ts";
import type { PodFacts } from "../env/field-ref.ts";
import { ContainerProcess, type ProcessExit } from "../runtime/container-process.ts";
import type { VolumeDir } from "../volumes/pod-volumes.ts";
import { prepareLaunch } from "./container-launch.ts";
import { ContainerProbes } from "./container-probes.ts";
import type { PodContext } from "./pod-context.ts";

export type ContainerKind = "init" | "sidecar" | "app";

export interface PodSandbox {
  uid: string;
  podKey: string;
  podDir: string;
  facts: PodFacts;
  hostname: string;
  hostsFile: string;
  volumes: Map<string, VolumeDir>;
  terminationGracePeriodSeconds: number;
}

export class ContainerRuntime {
  proc: ContainerProcess | undefined;
  restartCount = 0;
  /** The latest finished attempt that no new attempt replaced yet. */
  exited: ContainerStateTerminated | undefined;
  /** The attempt before `exited` (or before the running one): lastState. */
  previous: ContainerStateTerminated | undefined;
  waiting: ContainerStateWaiting = { reason: "ContainerCreating" };
  /** Set by the pod: the exited container will run again (status shows CrashLoopBackOff). */
  restartPending = false;
  private imageID = "";
  private containerID: string | undefined;
  private crashes = 0;
  private nextStartAt = 0;
  private lastDelayMs = 0;
  private killMessage: string | undefined;
  readonly probes: ContainerProbes;

  constructor(
    readonly spec: Container,
    readonly kind: ContainerKind,
    private readonly ctx: PodContext,
    private readonly sandbox: PodSandbox,
  ) {
    const onFatal = (what: string, output: string) => {
      const probe = what === "startup" ? spec.startupProbe : spec.livenessProbe;
      const grace = probe?.terminationGracePeriodSeconds ?? sandbox.terminationGracePeriodSeconds;
      void this.kill(grace * 1000, `${what}${what.endsWith("hook") ? "" : " probe"} failed: ${output}`);
    };
    this.probes = new ContainerProbes(
      spec,
      () => this.proc?.pid,
      sandbox.facts.podIP,
      onFatal,
      () => ctx.enqueue(sandbox.uid),
    );
  }

  get running(): boolean {
    return this.proc?.running ?? false;
  }
  get started(): boolean {
    return this.running && this.probes.started;
  }
  get ready(): boolean {
    if (this.kind === "init") return this.exited?.exitCode === 0 && !this.running;
    return this.started && this.probes.ready;
  }
  get succeeded(): boolean {
    return !this.running && this.exited?.exitCode === 0;
  }

  /** Adopts what the API said about this container before the agent (re)started. */
  seed(st: ContainerStatus): void {
    this.restartCount = st.restartCount;
    this.imageID = st.imageID;
    // It ran before: it is not being created any more, whatever happens next.
    if (st.state.terminated || st.state.running || st.lastState.terminated) this.waiting = {};
    if (st.state.terminated) {
      this.exited = st.state.terminated;
      this.previous = st.lastState.terminated;
    } else if (st.state.running) {
      const now = apiTime();
      this.exited = {
        exitCode: 137,
        reason: "Error",
        message: "the local node agent restarted; the container's processes died with it",
        startedAt: st.state.running.startedAt,
        finishedAt: now,
        containerID: st.containerID,
      };
      this.previous = st.lastState.terminated;
    } else if (st.lastState.terminated) {
      this.exited = st.lastState.terminated;
    }
  }

  /** Milliseconds until the backoff allows the next attempt (0: now). */
  backoffRemainingMs(now = Date.now()): number {
    return Math.max(0, this.nextStartAt - now);
  }

  /** Starts an attempt; false when it could not (waiting reason says why). API errors throw. */
  async start(pod: Pod): Promise<boolean> {
    const prepared = await prepareLaunch(pod, this.spec, this.sandbox, this.ctx);
    if (!prepared.ok) {
      this.waiting = prepared.waiting;
      return false;
    }
    if (this.exited) {
      this.previous = this.exited;
      this.exited = undefined;
      this.restartCount++;
    }
    this.imageID = prepared.imageID;
    this.containerID = `krtlocal://${randomBytes(16).toString("hex")}`;
    this.waiting = {};
    this.restartPending = false;
    this.killMessage = undefined;
    const launch = { ...prepared.spec, logFile: this.logFile(this.restartCount) };
    const proc = new ContainerProcess(launch, this.ctx.tools, this.ctx.registry);
    this.proc = proc;
    this.ctx.log.info(
      { pod: this.sandbox.podKey, container: this.spec.name, pid: proc.pid, restartCount: this.restartCount },
      "container started",
    );
    this.probes.start(launch.env);
    void proc.exited.then((exit) => this.onExit(proc, exit));
    if (this.spec.lifecycle?.postStart) void this.probes.postStart(this.spec.lifecycle.postStart, launch.env);
    return true;
  }

  logFile(restartCount: number): string {
    return join(this.sandbox.podDir, "logs", this.spec.name, `${restartCount}.log`);
  }

  /**
   * SIGTERM the attempt's group, SIGKILL after `graceMs`. `why` goes into the container's log and,
   * with `inStatus`, into the terminated state's message (kubelet leaves it empty on deletion).
   */
  async kill(graceMs: number, why?: string, inStatus = true): Promise<void> {
    const proc = this.proc;
    if (!proc?.running) return;
    if (why) {
      if (inStatus) this.killMessage = why;
      this.ctx.log.info({ pod: this.sandbox.podKey, container: this.spec.name, why }, "killing container");
    }
    this.probes.stop();
    await proc.stop(graceMs);
  }

  private onExit(proc: ContainerProcess, exit: ProcessExit): void {
    if (this.proc !== proc) return;
    this.probes.containerStopped();
    const startedAt = proc.startedAt;
    this.exited = {
      exitCode: exit.exitCode,
      ...(exit.signal ? { signal: exit.signal } : {}),
      reason: exit.startError ? "StartError" : exit.exitCode === 0 ? "Completed" : "Error",
      ...(exit.startError || this.killMessage ? { message: exit.startError ?? this.killMessage } : {}),
      startedAt: apiTime(startedAt),
      finishedAt: apiTime(exit.finishedAt),
      containerID: this.containerID,
    };
    // kubelet forgets the backoff of a container that ran longer than twice the maximum.
    const ranMs = exit.finishedAt.getTime() - startedAt.getTime();
    if (ranMs > 2 * this.ctx.restartBackoffMaxMs) this.crashes = 0;
    const delay =
      this.crashes === 0
        ? 0
        : Math.min(this.ctx.restartBackoffMaxMs, this.ctx.restartBackoffInitialMs * 2 ** (this.crashes - 1));
    this.crashes++;
    this.lastDelayMs = delay;
    this.nextStartAt = exit.finishedAt.getTime() + delay;
    this.ctx.log.info(
      { pod: this.sandbox.podKey, container: this.spec.name, exitCode: exit.exitCode, signal: exit.signal },
      "container exited",
    );
    this.ctx.enqueue(this.sandbox.uid);
  }

  status(podName: string, podNamespace: string): ContainerStatus {
    const base = {
      name: this.spec.name,
      image: this.spec.image ?? "",
      imageID: this.imageID,
      restartCount: this.restartCount,
      ready: this.ready,
      started: this.started,
    };
    const last = (t?: ContainerStateTerminated) => (t ? { terminated: t } : {});
    if (this.running) {
      return {
        ...base,
        containerID: this.containerID,
        state: { running: { startedAt: apiTime(this.proc!.startedAt) } },
        lastState: last(this.previous),
      };
    }
    if (this.exited && this.restartPending && !this.waiting.reason) {
      // The backoff duration, not the time left: the status must not change every second.
      const secs = Math.ceil(this.lastDelayMs / 1000);
      const message = `back-off ${secs}s restarting failed container=${this.spec.name} pod=${podName}_${podNamespace}(${this.sandbox.uid})`;
      return {
        ...base,
        containerID: this.exited.containerID,
        state: { waiting: { reason: "CrashLoopBackOff", message } },
        lastState: last(this.exited),
      };
    }
    if (this.waiting.reason) {
      return {
        ...base,
        state: { waiting: { ...this.waiting } },
        lastState: last(this.exited ?? this.previous),
      };
    }
    if (this.exited)
      return {
        ...base,
        containerID: this.exited.containerID,
        state: { terminated: this.exited },
        lastState: last(this.previous),
      };
    return { ...base, state: { waiting: { reason: "ContainerCreating" } }, lastState: {} };
  }
}
