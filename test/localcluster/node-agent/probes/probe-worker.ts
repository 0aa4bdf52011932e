/**
 * Probes one container attempt periodically: waits `initialDelaySeconds` after the start, then runs
 * the handler every `periodSeconds` with `timeoutSeconds`, feeding a ProbeState. Liveness and
 * readiness wait for `gate()` (the startup probe's success); a succeeded startup probe stops.
 */
import type { Probe } from "../api/types.ts";
import { type HandlerTarget, runHandler } from "./handlers.ts";
import { type ProbeKind, type ProbeResult, ProbeState, probeTiming } from "./probe-state.ts";

export interface ProbeWorkerOptions {
  kind: ProbeKind;
  probe: Probe;
  target: HandlerTarget;
  /** False while a startup probe has not succeeded yet. */
  gate(): boolean;
  /** The reported result changed (the pod needs a sync). */
  onChange(kind: ProbeKind, result: ProbeResult, output: string): void;
}

export class ProbeWorker {
  readonly state: ProbeState;
  private timer: Timer | undefined;
  private stopped = false;
  lastOutput = "";

  constructor(private readonly opts: ProbeWorkerOptions) {
    this.state = new ProbeState(opts.kind, probeTiming(opts.kind, opts.probe));
  }

  get result(): ProbeResult {
    return this.state.result;
  }

  start(): void {
    this.schedule(this.state.timing.initialDelayMs);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** The container exited: readiness drops now instead of after failureThreshold periods. */
  containerStopped(): void {
    this.stop();
    if (this.state.containerStopped())
      this.opts.onChange(this.opts.kind, this.state.result, "container stopped");
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.opts.kind !== "startup" && !this.opts.gate()) return this.schedule(this.state.timing.periodMs);
    const out = await runHandler(this.opts.probe, this.opts.target, this.state.timing.timeoutMs);
    if (this.stopped) return;
    this.lastOutput = out.output;
    if (this.state.observe(out.ok)) this.opts.onChange(this.opts.kind, this.state.result, out.output);
    if (this.state.onHold) return;
    if (this.opts.kind === "startup" && this.state.result === "success") return;
    this.schedule(this.state.timing.periodMs);
  }
}
