/**
 * Sends runtimed's fenced status patches and says what happened: written (with the stored Run),
 * fenced (the Run moved on — another attempt, another pod: stop acting on it), gone, rejected
 * (the status failed validation: a bug, reported), or — after retrying an unknown outcome
 * (network, 5xx) with backoff — whatever the retries found. A retry that hits the fence after an
 * unknown outcome re-reads the Run: the first request may have landed.
 */
import { type Run, RunResource } from "@kruntimes/api";
import { classifyWriteError, type KubeClient, path } from "@kruntimes/kube";
import type { Logger } from "../logger.ts";
import type { Metrics, WriteKind, WriteResult } from "../metrics.ts";
import type { JsonPatchOp } from "./run-status.ts";

export type WriteOutcome =
  | { ok: true; run: Run }
  | { ok: false; result: Exclude<WriteResult, "ok">; error: string };

export class StatusWriter {
  constructor(
    private readonly client: KubeClient,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly retryMs: number,
  ) {}

  /** The stored Run; undefined when it is gone or cannot be read now. */
  read(run: Run): Promise<Run | undefined> {
    return this.client
      .get<Run>(path(RunResource, run.metadata.namespace, run.metadata.name))
      .catch(() => undefined);
  }

  /**
   * Applies `ops`; `landed` tells, from a re-read Run, whether an earlier request with an unknown
   * outcome did land. `stopped` ends retries early (shutdown).
   */
  async write(
    run: Run,
    kind: WriteKind,
    ops: JsonPatchOp[],
    landed: (stored: Run) => boolean,
    stopped: () => boolean = () => false,
  ): Promise<WriteOutcome> {
    const p = path(RunResource, run.metadata.namespace, run.metadata.name, "status");
    let delay = this.retryMs;
    let unsure = false;
    for (;;) {
      const t0 = performance.now();
      try {
        const stored = await this.client.patch<Run>(p, ops, "json");
        this.metrics.statusWriteDuration.observe({ kind }, (performance.now() - t0) / 1000);
        this.metrics.statusWrites.inc({ kind, result: "ok" });
        return { ok: true, run: stored };
      } catch (e) {
        this.metrics.statusWriteDuration.observe({ kind }, (performance.now() - t0) / 1000);
        const result = classifyWriteError(e);
        const error = e instanceof Error ? e.message : String(e);
        if (result === "fenced" && unsure) {
          const stored = await this.client
            .get<Run>(path(RunResource, run.metadata.namespace, run.metadata.name))
            .catch(() => undefined);
          if (stored && landed(stored)) {
            this.metrics.statusWrites.inc({ kind, result: "ok" });
            return { ok: true, run: stored };
          }
        }
        this.metrics.statusWrites.inc({ kind, result });
        if (result !== "ambiguous" || stopped()) return { ok: false, result, error };
        unsure = true;
        this.log.warn(
          { run: run.metadata.name, namespace: run.metadata.namespace, kind, err: error, retryInMs: delay },
          "status write failed; retrying",
        );
        await Bun.sleep(delay);
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }
}
