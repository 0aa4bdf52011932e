/** Reconcile metrics shared by every controller in the process (bounded by controller name). */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export class ControllerMetrics {
  private readonly total: Counter<"controller" | "result">;
  private readonly duration: Histogram<"controller">;
  private readonly queueDepth: Gauge<"controller">;

  constructor(registry: Registry) {
    this.total = new Counter({
      name: "kruntimes_reconcile_total",
      help: "Reconciles by controller and result (done, requeueAfter, backoff).",
      labelNames: ["controller", "result"],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: "kruntimes_reconcile_duration_seconds",
      help: "Time spent in one reconcile.",
      labelNames: ["controller"],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    });
    this.queueDepth = new Gauge({
      name: "kruntimes_workqueue_depth",
      help: "Keys waiting in a controller's work queue.",
      labelNames: ["controller"],
      registers: [registry],
    });
  }

  observe(controller: string, result: string, seconds: number): void {
    this.total.inc({ controller, result });
    this.duration.observe({ controller }, seconds);
  }

  depth(controller: string, n: number): void {
    this.queueDepth.set({ controller }, n);
  }
}
