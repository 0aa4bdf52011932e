/**
 * One container of a pod across its restarts: spawns the process in its own session (process
 * group) and private mount/UTS namespaces, tees stdout/stderr into CRI-format log files (one per
 * attempt), runs its probes, and remembers the state a kubelet reports (waiting, running,
 * terminated, last state, restart count).
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Container, ContainerState, ContainerStatus } from "../api/types.ts";
import type { ResolvedImage } from "../images/image-map.ts";
import { rfc3339Nano } from "../logs/cri-log-format.ts";
import { CriLogWriter } from "../logs/cri-log-writer.ts";
import { runHandler } from "../probes/handlers.ts";
import type { ProbeKind, ProbeResult } from "../probes/probe-state.ts";
import { ProbeWorker } from "../probes/probe-worker.ts";
import type { ProcessRegistry } from "../runtime/process-registry.ts";
import { groupAlive, signalGroup } from "../runtime/process-registry.ts";

export interface LaunchSpec {
  image: ResolvedImage;
  argv: string[];
  env: Record<string, string>;
  /** The complete `sh -c` wrapper that sets up mounts and execs argv. */
  wrapper: string;
  startErrorFile: string;
  podIP: string;
}

export interface RunnerHooks {
  /** Something the pod status reflects changed (exit, probe result). */
  changed(): void;
  /** Liveness or startup failed: the pod worker restarts the container. */
  unhealthy(why: string): void;
}

export class ContainerRunner {
  restartCount = 0;
  state: ContainerState = { waiting: { reason: "ContainerCreating" } };
  lastState: ContainerState = {};
  imageID = "";
  private proc: Subprocess | undefined;
  private probes: ProbeWorker[] = [];
  private exitWaiters: (() => void)[] = [];
  /** Earliest time the next start may happen (crash-loop backoff). */
  nextStartAtMs = 0;
  private backoffMs = 0;
  private attemptId = 0;

  constructor(
    readonly spec: Container,
    readonly podKey: string,
    private readonly logDir: string,
    private readonly registry: ProcessRegistry,
    private readonly hooks: RunnerHooks,
  ) {}

  get running(): boolean {
    return this.proc !== undefined && this.state.running !== undefined;
  }
  get pid(): number | undefined {
    return this.running ? this.proc?.pid : undefined;
  }
  get everStarted(): boolean {
    return this.attemptId > 0;
  }
  get containerID(): string | undefined {
    return this.everStarted
      ? `krtlocal://${this.podKey.replaceAll("/", "_")}_${this.spec.name}_${this.attemptId}`
      : undefined;
  }
  logFile(restart = this.restartCount): string {
    return join(this.logDir, this.spec.name, `${restart}.log`);
  }

  private probeResult(kind: ProbeKind): ProbeResult | undefined {
    return this.probes.find((p) => p.state.kind === kind)?.result;
  }
  /** Started as kubelet reports it: running and the startup probe (if any) passed. */
  get started(): boolean {
    const s = this.probeResult("startup");
    return this.running && (s === undefined || s === "success");
  }
  get ready(): boolean {
    const r = this.probeResult("readiness");
    return this.started && (r === undefined || r === "success");
  }

  waiting(reason: string, message?: string): void {
    if (this.running) return;
    const same = this.state.waiting?.reason === reason && this.state.waiting.message === message;
    if (!same) {
      if (this.state.terminated) this.lastState = { terminated: this.state.terminated };
      this.state = { waiting: { reason, ...(message ? { message } : {}) } };
      this.hooks.changed();
    }
  }

  start(l: LaunchSpec): void {
    if (this.everStarted) this.restartCount++;
    this.attemptId++;
    if (this.state.terminated) this.lastState = { terminated: this.state.terminated };
    this.imageID = l.image.imageID;
    rmSync(l.startErrorFile, { force: true });
    const log = new CriLogWriter(this.logFile());
    const startedAt = rfc3339Nano(Date.now());
    const proc = Bun.spawn(
      [
        "setpriv",
        "--pdeathsig",
        "KILL",
        "setsid",
        "unshare",
        "--mount",
        "--uts",
        "--propagation",
        "private",
        "sh",
        "-c",
        l.wrapper,
        "krt-container",
        ...l.argv,
      ],
      { env: l.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
    );
    this.proc = proc;
    this.registry.record(proc.pid, this.podKey, this.spec.name);
    this.state = { running: { startedAt } };
    const pump = async (stream: ReadableStream<Uint8Array>, name: "stdout" | "stderr") => {
      for await (const chunk of stream) log.write(name, chunk);
      log.end(name);
    };
    const pumps = Promise.all([pump(proc.stdout, "stdout"), pump(proc.stderr, "stderr")]);
    this.startProbes(l);
    void proc.exited.then(async (code) => {
      await pumps.catch(() => {});
      // Members of the group may outlive the leader; a container is over when its group is.
      signalGroup(proc.pid, "SIGKILL");
      this.registry.forget(proc.pid);
      const startError = existsSync(l.startErrorFile) ? readFileSync(l.startErrorFile, "utf8").trim() : "";
      if (startError) log.note(startError);
      log.close();
      for (const p of this.probes) p.containerStopped();
      this.probes = [];
      const sc = proc.signalCode;
      const signal = typeof sc === "number" ? sc : sc ? signalNumber(sc) : undefined;
      const exitCode = code ?? 128 + (signal ?? 0);
      const ranMs = Date.now() - new Date(startedAt).getTime();
      this.state = {
        terminated: {
          exitCode: startError ? 128 : exitCode,
          ...(signal ? { signal } : {}),
          reason: startError ? "StartError" : exitCode === 0 ? "Completed" : "Error",
          ...(startError ? { message: startError } : {}),
          startedAt,
          finishedAt: rfc3339Nano(Date.now()),
          containerID: this.containerID,
        },
      };
      this.proc = undefined;
      // kubelet's crash-loop backoff doubles per quick exit and resets after 10 minutes of running.
      this.backoffMs = ranMs > 600_000 ? 0 : this.backoffMs;
      for (const w of this.exitWaiters.splice(0)) w();
      this.hooks.changed();
    });
  }

  /** Arms the restart backoff after an exit; returns the delay. */
  armBackoff(initialMs: number, maxMs: number): number {
    this.backoffMs = this.backoffMs === 0 ? initialMs : Math.min(maxMs, this.backoffMs * 2);
    this.nextStartAtMs = Date.now() + this.backoffMs;
    return this.backoffMs;
  }

  private startProbes(l: LaunchSpec): void {
    const target = { podIP: l.podIP, ports: this.spec.ports ?? [], pid: () => this.pid, env: l.env };
    const gate = () =>
      this.probeResult("startup") !== "failure" && (this.probeResult("startup") ?? "success") === "success";
    const kinds: [ProbeKind, keyof Container][] = [
      ["startup", "startupProbe"],
      ["readiness", "readinessProbe"],
      ["liveness", "livenessProbe"],
    ];
    for (const [kind, field] of kinds) {
      const probe = this.spec[field] as Container["readinessProbe"];
      if (!probe) continue;
      const w = new ProbeWorker({
        kind,
        probe,
        target,
        gate,
        onChange: (k, result, output) => {
          if (result === "failure" && (k === "liveness" || k === "startup")) {
            this.hooks.unhealthy(`${k} probe failed: ${output}`);
          }
          this.hooks.changed();
        },
      });
      this.probes.push(w);
      w.start();
    }
  }

  /** preStop (if any), SIGTERM to the group, SIGKILL once the grace period is over. */
  async stop(graceMs: number): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    const deadline = Date.now() + graceMs;
    const preStop = this.spec.lifecycle?.preStop;
    if (preStop) {
      await runHandler(
        preStop,
        { podIP: "", ports: this.spec.ports ?? [], pid: () => this.pid, env: {} },
        graceMs,
      ).catch(() => {});
    }
    signalGroup(proc.pid, "SIGTERM");
    const exited = new Promise<void>((r) => this.exitWaiters.push(r));
    const left = Math.max(0, deadline - Date.now());
    const timer = setTimeout(() => signalGroup(proc.pid, "SIGKILL"), left);
    await exited;
    clearTimeout(timer);
  }

  /** Immediate SIGKILL, used when the pod object vanished or the agent shuts down hard. */
  kill(): void {
    if (this.proc) signalGroup(this.proc.pid, "SIGKILL");
  }

  alive(): boolean {
    return this.proc !== undefined && groupAlive(this.proc.pid);
  }

  status(image: string): ContainerStatus {
    return {
      name: this.spec.name,
      state: this.state,
      lastState: this.lastState,
      ready: this.ready,
      started: this.started,
      restartCount: this.restartCount,
      image,
      imageID: this.imageID,
      ...(this.containerID ? { containerID: this.containerID } : {}),
    };
  }
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};
function signalNumber(name: string): number | undefined {
  return SIGNALS[name];
}

export const logDirOf = (stateDir: string, ns: string, name: string, uid: string) =>
  join(stateDir, "pods", `${ns}_${name}_${uid}`, "logs");
