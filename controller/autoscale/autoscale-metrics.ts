/**
 * Autoscaler metrics. Per-Runtime gauges carry `runtime` (`<namespace>/<name>`, one series per
 * autoscaled Runtime, removed with it); counters carry closed reasons only.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export class AutoscaleMetrics {
  readonly desired: Gauge<"runtime">;
  readonly current: Gauge<"runtime">;
  readonly draining: Gauge<"runtime">;
  readonly decisions: Counter<"reason">;
  readonly writes: Counter<"what" | "result">;
  readonly reactSeconds: Histogram<string>;
  readonly scaleWriteSeconds: Histogram<string>;

  constructor(registry: Registry) {
    this.desired = new Gauge({
      name: "kruntimes_autoscaler_desired_replicas",
      help: "Pods the autoscaler wants for the Runtime now.",
      labelNames: ["runtime"],
      registers: [registry],
    });
    this.current = new Gauge({
      name: "kruntimes_autoscaler_current_replicas",
      help: "The Runtime Deployment's replica count as the autoscaler last saw it.",
      labelNames: ["runtime"],
      registers: [registry],
    });
    this.draining = new Gauge({
      name: "kruntimes_autoscaler_draining_pods",
      help: "Pods of the Runtime draining for a scale-down (no new Runs; removed once empty).",
      labelNames: ["runtime"],
      registers: [registry],
    });
    this.decisions = new Counter({
      name: "kruntimes_autoscaler_decisions_total",
      help: "Scaling decisions acted on: ScaleUp, ScaleUpFromZero, ScaleDownStarted, ScaleDown, DrainCancelled, DrainTimedOut.",
      labelNames: ["reason"],
      registers: [registry],
    });
    this.writes = new Counter({
      name: "kruntimes_autoscaler_writes_total",
      help: "API writes of the autoscaler by what (scale, mark, unmark, release, delete, status) and result (ok, error).",
      labelNames: ["what", "result"],
      registers: [registry],
    });
    this.reactSeconds = new Histogram({
      name: "kruntimes_autoscaler_scale_up_reaction_seconds",
      help: "From the event that showed a backlog (a Run, pod or capacity change) to the scale-up write sent.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5],
      registers: [registry],
    });
    this.scaleWriteSeconds = new Histogram({
      name: "kruntimes_autoscaler_scale_write_seconds",
      help: "How long the apiserver took to accept a scale-up write.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5],
      registers: [registry],
    });
  }

  forget(runtime: string): void {
    this.desired.remove({ runtime });
    this.current.remove({ runtime });
    this.draining.remove({ runtime });
  }
}
