/**
 * Keeps one artifact maintainer per store that something needs, keyed `<namespace>/<storeId>`:
 * while any Run labelled with the store still carries the artifacts finalizer, its objects are
 * applied (from that Run's snapshot — the Runtime may have changed or be gone); once none does,
 * they are deleted, so a deleted Runtime leaves no maintainer behind once its Runs are cleaned up.
 * Level-triggered from the Run cache; re-applied only when the rendered objects change.
 */
import {
  Annotations,
  ARTIFACTS_FINALIZER,
  Labels,
  maintainerName,
  parseSnapshot,
  type Run,
} from "@kruntimes/api";
import { type Informer, type KubeClient, KubeError, type KubeObject, path } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Reconciler } from "../reconcile/controller.ts";
import { Result } from "../reconcile/result.ts";
import { type MaintainerRender, maintainerObjects } from "./maintainer-objects.ts";

export interface MaintainerReconcilerDeps {
  runs: Informer<Run>;
  /** The controller's managed Deployments: a maintainer deleted by hand is put back. */
  deployments: Informer<KubeObject>;
  client: KubeClient;
  log: Logger;
  fieldManager: string;
  render: MaintainerRender;
}

export function maintainerKey(run: Run): string | undefined {
  const id = run.metadata.labels?.[Labels.artifactStore];
  return id ? `${run.metadata.namespace}/${id}` : undefined;
}

export class MaintainerReconciler implements Reconciler {
  readonly name = "artifact-maintainer";
  /** key → JSON of what was last applied; a restart re-applies once (server-side apply is idempotent). */
  private readonly applied = new Map<string, string>();

  constructor(private readonly d: MaintainerReconcilerDeps) {}

  async reconcile(key: string): Promise<Result> {
    const [namespace, storeId] = key.split("/") as [string, string];
    let needing: Run | undefined;
    for (const r of this.d.runs.values()) {
      if (r.metadata.namespace !== namespace || r.metadata.labels?.[Labels.artifactStore] !== storeId)
        continue;
      if (
        (r.metadata.finalizers ?? []).includes(ARTIFACTS_FINALIZER) &&
        r.metadata.annotations?.[Annotations.artifactStore]
      ) {
        needing = r;
        break;
      }
    }
    if (!needing) return this.remove(key, namespace, storeId);
    let store: ReturnType<typeof parseSnapshot>;
    try {
      store = parseSnapshot(needing.metadata.annotations?.[Annotations.artifactStore]);
    } catch (e) {
      this.d.log.error(
        { store: key, run: needing.metadata.name, err: (e as Error).message },
        "bad artifact store snapshot",
      );
      return Result.backoff("bad snapshot");
    }
    const objects = maintainerObjects(namespace, storeId, store, this.d.render);
    const json = JSON.stringify(objects);
    const present = this.d.deployments.get(`${namespace}/${maintainerName(storeId)}`);
    if (this.applied.get(key) === json && present) return Result.done();
    for (const o of objects) {
      try {
        await this.d.client.apply(path(o.resource, o.namespace, o.name), o.body, this.d.fieldManager, true);
      } catch (e) {
        // Without the auth-delegator binding cleanup still works; downloads answer that they cannot authorize.
        if (o.resource.plural === "clusterrolebindings" && e instanceof KubeError && e.code === 403) {
          this.d.log.warn(
            { store: key, err: e.message },
            "maintainer cannot be bound to system:auth-delegator; downloads will fail",
          );
          continue;
        }
        throw e;
      }
    }
    this.applied.set(key, json);
    this.d.log.info({ store: key, run: needing.metadata.name }, "artifact maintainer applied");
    return Result.done();
  }

  private async remove(key: string, namespace: string, storeId: string): Promise<Result> {
    const had = this.applied.delete(key);
    let deleted = 0;
    for (const o of maintainerObjects(
      namespace,
      storeId,
      { filesystem: { claimName: "x" } },
      this.d.render,
    ).reverse()) {
      try {
        await this.d.client.delete(path(o.resource, o.namespace, o.name), {
          propagationPolicy: "Background",
        });
        deleted++;
      } catch (e) {
        if (!(e instanceof KubeError && e.code === 404)) throw e;
      }
    }
    if (deleted || had)
      this.d.log.info({ store: key, deleted }, "artifact maintainer removed: no Run needs it");
    return Result.done();
  }
}
