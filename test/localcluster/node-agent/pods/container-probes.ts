/**
 * The probes and lifecycle hooks of one container attempt. Startup gates liveness and readiness;
 * a reported liveness or startup failure, or a failed postStart hook, is fatal: the container is
 * killed (and restarted per the pod's restartPolicy).
 */
import type { Container, LifecycleHandler } from "../api/types.ts";
import { type HandlerTarget, runHandler } from "../probes/handlers.ts";
import type { ProbeKind } from "../probes/probe-state.ts";
import { ProbeWorker } from "../probes/probe-worker.ts";

export class ContainerProbes {
  private workers: Partial<Record<ProbeKind, ProbeWorker>> = {};
  private target: HandlerTarget | undefined;

  constructor(
    private readonly spec: Container,
    private readonly pid: () => number | undefined,
    private readonly podIP: string,
    private readonly onFatal: (what: string, output: string) => void,
    private readonly onChange: () => void,
  ) {}

  /** No startup probe, or it succeeded. */
  get started(): boolean {
    const w = this.workers.startup;
    return !this.spec.startupProbe || w?.result === "success";
  }

  /** No readiness probe, or it reports success. */
  get ready(): boolean {
    return !this.spec.readinessProbe || this.workers.readiness?.result === "success";
  }

  start(env: Record<string, string>): void {
    this.stop();
    this.target = { podIP: this.podIP, ports: this.spec.ports ?? [], pid: this.pid, env };
    const target = this.target;
    const probes: [ProbeKind, Container["readinessProbe"]][] = [
      ["startup", this.spec.startupProbe],
      ["readiness", this.spec.readinessProbe],
      ["liveness", this.spec.livenessProbe],
    ];
    const workers: Partial<Record<ProbeKind, ProbeWorker>> = {};
    for (const [kind, probe] of probes) {
      if (!probe) continue;
      workers[kind] = new ProbeWorker({
        kind,
        probe,
        target,
        gate: () => this.started,
        onChange: (k, result, output) => {
          if (result === "failure" && k !== "readiness")
            this.onFatal(k === "startup" ? "startup" : "liveness", output);
          this.onChange();
        },
      });
    }
    this.workers = workers;
    for (const w of Object.values(workers)) w.start();
  }

  stop(): void {
    for (const w of Object.values(this.workers)) w.stop();
  }

  /** The attempt ended: readiness drops now. */
  containerStopped(): void {
    for (const w of Object.values(this.workers)) w.containerStopped();
  }

  async postStart(h: LifecycleHandler, env: Record<string, string>): Promise<void> {
    const out = await this.runLifecycle(h, env, 30_000);
    if (!out.ok) this.onFatal("postStart hook", out.output);
  }

  /** Runs preStop within `timeoutMs` (the remaining grace period). */
  async preStop(h: LifecycleHandler, timeoutMs: number): Promise<void> {
    await this.runLifecycle(h, this.target?.env ?? {}, timeoutMs);
  }

  private async runLifecycle(h: LifecycleHandler, env: Record<string, string>, timeoutMs: number) {
    if (h.sleep) {
      await Bun.sleep(Math.min(h.sleep.seconds * 1000, timeoutMs));
      return { ok: true, output: "" };
    }
    const target = { podIP: this.podIP, ports: this.spec.ports ?? [], pid: this.pid, env };
    return runHandler(h, target, timeoutMs);
  }
}
