/**
 * The maintainer's cleanup: for every Run of its store that is being deleted and still carries
 * the artifacts finalizer, delete everything under the Run's prefix (all attempts), then remove
 * the finalizer with a JSON patch that tests its index first (other finalizers are untouched).
 * Keyed by Run, level-triggered: a failed deletion is retried with backoff and at every resync;
 * a Run is never let go before its objects are gone.
 */
import { ARTIFACTS_FINALIZER, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, KubeError, keyOf, path } from "@kruntimes/kube";
import type { Logger } from "../../logger.ts";
import { type ArtifactStoreDriver, runPrefix } from "../store.ts";
import type { MaintainerMetrics } from "./maintainer-metrics.ts";

export class Cleanup {
  private readonly busy = new Set<string>();
  private readonly failures = new Map<string, number>();
  deleted = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly store: ArtifactStoreDriver,
    private readonly log: Logger,
    private readonly metrics: MaintainerMetrics,
  ) {}

  /** Whether this Run waits for us. */
  static pending(run: Run): boolean {
    return (
      Boolean(run.metadata.deletionTimestamp) && (run.metadata.finalizers ?? []).includes(ARTIFACTS_FINALIZER)
    );
  }

  consider(run: Run): void {
    if (!Cleanup.pending(run)) return;
    const key = keyOf(run);
    if (this.busy.has(key)) return;
    this.busy.add(key);
    void this.clean(run).then((again) => {
      this.busy.delete(key);
      if (again) this.consider(again);
    });
  }

  /** Undefined when done (or the Run is gone); else the Run as it is now, to try again. */
  private async clean(run: Run): Promise<Run | undefined> {
    const { name, namespace, uid } = run.metadata;
    const log = this.log.child({ run: name, namespace, runUID: uid });
    try {
      const n = await this.store.deletePrefix(runPrefix(namespace ?? "", uid ?? ""));
      const finalizers = run.metadata.finalizers ?? [];
      const i = finalizers.indexOf(ARTIFACTS_FINALIZER);
      await this.client.patch(
        path(RunResource, namespace, name),
        [
          { op: "test", path: "/metadata/uid", value: uid },
          { op: "test", path: `/metadata/finalizers/${i}`, value: ARTIFACTS_FINALIZER },
          { op: "remove", path: `/metadata/finalizers/${i}` },
        ],
        "json",
      );
      this.deleted += n;
      this.metrics.deletions.inc({ result: "ok" });
      this.metrics.deletedObjects.inc(n);
      this.failures.delete(uid ?? "");
      log.info({ objects: n }, "artifacts deleted; finalizer removed");
      return undefined;
    } catch (e) {
      if (e instanceof KubeError && e.code === 404) return undefined;
      this.metrics.deletions.inc({ result: "failed" });
      // A moved finalizer index fails the test: the retry reads the current list.
      const tries = (this.failures.get(uid ?? "") ?? 0) + 1;
      this.failures.set(uid ?? "", tries);
      const delay = Math.min(200 * 2 ** tries, 30_000);
      log.warn(
        { err: e instanceof Error ? e.message : String(e), retryInMs: delay },
        "artifact cleanup failed",
      );
      await Bun.sleep(delay);
      const fresh = await this.client.get<Run>(path(RunResource, namespace, name)).catch(() => undefined);
      return fresh && fresh.metadata.uid === uid ? fresh : undefined;
    }
  }
}
