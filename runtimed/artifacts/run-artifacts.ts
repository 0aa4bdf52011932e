/**
 * runtimed's artifact step for one attempt. Before Execute: a fresh directory under the shared
 * workspace (`<workspace>/.kruntimes/artifacts/<runUID>/<attempt>`, world-writable: the runtime
 * container may run as another user) passed as `$KRUNTIME_ARTIFACTS_DIR`. After the attempt
 * (whatever its outcome): collect; when something is there, put the finalizer, the store label
 * and the store snapshot on the Run (one server-side apply, once per Run, before any upload, so a
 * deletion can never miss an object), upload, and hand back the references. A Run that wrote
 * nothing costs one mkdir and one readdir, and no API write.
 */
import { chmodSync, mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  Annotations,
  API_VERSION,
  ARTIFACTS_FINALIZER,
  type ArtifactRef,
  artifactStoreId,
  Labels,
  Limits,
  Reason,
  RUN_KIND,
  type Run,
  RunPhase,
  RunResource,
  snapshotJson,
} from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { Logger } from "../logger.ts";
import type { ArtifactOptions } from "../options.ts";
import type { Outcome } from "../status/outcome.ts";
import type { ArtifactMetrics } from "./artifact-metrics.ts";
import { ArtifactRejection, collect } from "./collect.ts";
import { openStore, storeLocationOnly } from "./open-store.ts";
import { InputStager } from "./stage-inputs.ts";
import type { ArtifactStoreDriver } from "./store.ts";
import { UploadFailed, uploadAll } from "./uploader.ts";

export const ARTIFACTS_ENV = "KRUNTIME_ARTIFACTS_DIR";
const FIELD_MANAGER = "kruntimes-runtimed-artifacts";
const DEFAULT_MAX_ARTIFACT = 1024 ** 3;
const DEFAULT_MAX_TOTAL = 4 * 1024 ** 3;
/** Entries an archive input may unpack to (a bound on inodes; collect has none on a directory's). */
const MAX_UNPACKED_ENTRIES = 1_000_000;

export interface StoredArtifacts {
  refs: ArtifactRef[];
  /** Set when storing failed: the Run ends with this instead (the task's exit code etc. stay). */
  outcome?: Outcome;
}

export class RunArtifacts {
  private readonly store: ArtifactStoreDriver;
  private readonly snapshot: string;
  private readonly storeId: string;
  /** Stages `spec.artifactInputs` from this same store before a task starts. */
  readonly inputs: InputStager;

  constructor(
    private readonly o: ArtifactOptions,
    private readonly workspace: string,
    private readonly namespace: string,
    private readonly client: KubeClient,
    private readonly metrics: ArtifactMetrics,
    private readonly log: Logger,
  ) {
    this.store = openStore(o.store, o);
    const loc = storeLocationOnly(o.store);
    this.snapshot = snapshotJson(loc);
    this.storeId = artifactStoreId(namespace, loc);
    this.inputs = new InputStager({
      store: this.store,
      client,
      metrics,
      log,
      retryBudgetMs: o.retryBudgetMs,
      retryDelayMs: 200,
      // A directory's files were at most maxArtifactBytes when it was stored.
      maxUnpackedBytes: o.store.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT,
      maxUnpackedEntries: MAX_UNPACKED_ENTRIES,
    });
  }

  dirFor(runUID: string, attempt: number): string {
    return join(this.workspace, ".kruntimes", "artifacts", runUID, String(attempt));
  }

  /** Synchronous and tiny: it sits between the bind and Execute. */
  prepare(runUID: string, attempt: number): Record<string, string> {
    const dir = this.dirFor(runUID, attempt);
    mkdirSync(dir, { recursive: true, mode: 0o777 });
    chmodSync(dir, 0o777);
    return { [ARTIFACTS_ENV]: dir };
  }

  /** `null` when the attempt stored nothing (nothing to record). */
  async record(
    run: Run,
    attempt: number,
    outcome: Outcome,
    signal: AbortSignal,
    /** Where the files are; default the attempt's directory (`dirFor`). Sessions: in their workspace. */
    from?: string,
  ): Promise<StoredArtifacts | null> {
    const uid = run.metadata.uid ?? "";
    const dir = from ?? this.dirFor(uid, attempt);
    const t0 = performance.now();
    let log = this.log;
    try {
      const planned = await collect(dir, {
        maxCount: Limits.artifactCount,
        maxArtifactBytes: this.o.store.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT,
        maxTotalBytes: this.o.store.maxTotalBytes ?? DEFAULT_MAX_TOTAL,
      });
      if (planned.length === 0) return null;
      log = this.log.child({ run: run.metadata.name, runUID: uid, attempt });
      if (!(await this.markRun(run))) return null;
      const refs = await uploadAll(this.store, planned, {
        namespace: run.metadata.namespace ?? this.namespace,
        runUID: uid,
        attempt,
        maxArtifactBytes: this.o.store.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT,
        retryBudgetMs: this.o.retryBudgetMs,
        retryDelayMs: 200,
        signal,
        onRetry: (name, err, delayMs) => {
          this.metrics.retries.inc();
          log.warn(
            { artifact: name, err: String(err), retryInMs: delayMs },
            "artifact store failed; retrying",
          );
        },
      });
      const bytes = refs.reduce((a, r) => a + (r.size ?? 0), 0);
      this.metrics.uploads.inc({ result: "ok" });
      this.metrics.bytes.inc(bytes);
      this.metrics.duration.observe((performance.now() - t0) / 1000);
      log.info({ artifacts: refs.length, bytes }, "artifacts stored");
      return { refs };
    } catch (e) {
      const rejected = e instanceof ArtifactRejection;
      if (!rejected && !(e instanceof UploadFailed)) throw e;
      this.metrics.uploads.inc({ result: rejected ? "rejected" : "failed" });
      log.warn({ err: e.message }, rejected ? "artifacts rejected" : "artifacts not stored");
      const reason = rejected ? Reason.ArtifactsRejected : Reason.ArtifactUploadFailed;
      const ok = outcome.phase === RunPhase.Succeeded;
      return {
        refs: [],
        outcome: ok
          ? { phase: RunPhase.Failed, reason, message: e.message }
          : { ...outcome, message: `${outcome.message}; ${reason}: ${e.message}` },
      };
    } finally {
      // Not awaited: removing the attempt's directory is housekeeping, not part of the Run's latency.
      void rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The finalizer, the store label and the snapshot, applied once; false when the Run is gone or going. */
  private async markRun(run: Run): Promise<boolean> {
    const m = run.metadata;
    if (m.finalizers?.includes(ARTIFACTS_FINALIZER) && m.annotations?.[Annotations.artifactStore])
      return true;
    try {
      await this.client.apply(
        path(RunResource, m.namespace, m.name),
        {
          apiVersion: API_VERSION,
          kind: RUN_KIND,
          metadata: {
            name: m.name,
            namespace: m.namespace,
            uid: m.uid,
            finalizers: [ARTIFACTS_FINALIZER],
            labels: { [Labels.artifactStore]: this.storeId },
            annotations: { [Annotations.artifactStore]: this.snapshot },
          },
        },
        FIELD_MANAGER,
      );
      m.finalizers = [...(m.finalizers ?? []), ARTIFACTS_FINALIZER];
      m.annotations = { ...m.annotations, [Annotations.artifactStore]: this.snapshot };
      return true;
    } catch (e) {
      // Gone (404), replaced (409 on the uid), or being deleted (a finalizer cannot be added then).
      if (e instanceof KubeError && (e.code === 404 || e.code === 409 || e.code === 422 || e.code === 403)) {
        this.log.info(
          { run: m.name, runUID: m.uid, err: e.message },
          "artifacts not stored: the Run is gone or being deleted",
        );
        return false;
      }
      throw e;
    }
  }
}

/** Earlier attempts' references stay; a newer one of the same name replaces it; at most the status limit. */
export function mergeRefs(
  old: readonly ArtifactRef[] | undefined,
  add: readonly ArtifactRef[],
): ArtifactRef[] {
  const names = new Set(add.map((r) => r.name));
  const kept = (old ?? []).filter((r) => !names.has(r.name));
  return [...kept, ...add].slice(-Limits.artifactCount);
}
