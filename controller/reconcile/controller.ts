/**
 * Runs a reconciler over a work queue with a fixed number of workers. Reconcilers are keyed by
 * object key, never by event: whatever happened, the reconciler reads the current state and
 * returns a `Result`; a thrown error backs the key off.
 */
import type { Logger } from "pino";
import type { ControllerMetrics } from "../metrics/controller-metrics.ts";
import type { Result } from "./result.ts";
import { WorkQueue, type WorkQueueOptions } from "./work-queue.ts";

export interface Reconciler {
  readonly name: string;
  reconcile(key: string): Promise<Result> | Result;
}

export interface ControllerOptions extends WorkQueueOptions {
  workers?: number;
}

export class Controller {
  readonly queue: WorkQueue;
  private running = false;
  private readonly workers: number;
  private active: Promise<void>[] = [];

  constructor(
    readonly reconciler: Reconciler,
    private readonly log: Logger,
    private readonly metrics: ControllerMetrics,
    opts: ControllerOptions = {},
  ) {
    this.queue = new WorkQueue(opts);
    this.workers = opts.workers ?? 1;
  }

  get name(): string {
    return this.reconciler.name;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (let i = 0; i < this.workers; i++) this.active.push(this.work());
  }

  async stop(): Promise<void> {
    this.running = false;
    this.queue.shutdown();
    await Promise.all(this.active);
    this.active = [];
  }

  private async work(): Promise<void> {
    while (this.running) {
      const key = await this.queue.get();
      if (key === undefined) return;
      await this.process(key);
    }
  }

  /** One reconcile of `key`, with the result applied to the queue. Exposed for tests. */
  async process(key: string): Promise<Result> {
    const start = performance.now();
    let result: Result;
    try {
      result = await this.reconciler.reconcile(key);
    } catch (e) {
      this.log.warn({ controller: this.name, key, err: e }, "reconcile failed");
      result = { kind: "backoff", reason: e instanceof Error ? e.message : String(e) };
    }
    this.metrics.observe(this.name, result.kind, (performance.now() - start) / 1000);
    switch (result.kind) {
      case "done":
        this.queue.forget(key);
        break;
      case "requeueAfter":
        this.queue.forget(key);
        this.queue.addAfter(key, result.ms);
        break;
      case "backoff":
        this.queue.addRateLimited(key);
        break;
    }
    this.queue.done(key);
    this.metrics.depth(this.name, this.queue.length);
    return result;
  }
}
