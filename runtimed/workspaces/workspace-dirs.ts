/**
 * The PersistentWorkspaces bound to this pod (a watch with the field selector
 * `status.boundPod=$POD_NAME`, the pod UID checked here, since a pod of an earlier incarnation had
 * the same name):
 * - `directoryFor(run)`: a Run naming a workspace works in its directory,
 *   `<workspace root>/workspaces/<name>-<uid prefix>` — created by the Runtime Server on first
 *   use and kept between Runs (only a Run's default per-attempt directory is ever cleaned);
 * - deletion: once the workspace is being deleted, the controller counts no active Run and none
 *   of this pod's supervisors uses it, the directory is removed (reclaimPolicy Delete; the
 *   Runtime Server does it, as the user that wrote the files) and then the
 *   `kruntimes.io/workspace` finalizer, by a JSON patch testing the UID and the entry. Failures
 *   are retried with backoff; a Runtime Server without RemoveDirectory keeps the finalizer (and
 *   the data) and says so.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type PersistentWorkspace,
  ReclaimPolicy,
  type Run,
  WORKSPACE_FINALIZER,
  WorkspaceResource,
  workspaceDirectory,
} from "@kruntimes/api";
import { Informer, type KubeClient, KubeError, keyOf, path } from "@kruntimes/kube";
import type { Logger } from "../logger.ts";
import type { RuntimedOptions } from "../options.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";

export interface WorkspaceDirsDeps {
  o: Pick<RuntimedOptions, "pod">;
  client: KubeClient;
  runtime: Pick<RuntimeServerClients["runtime"], "removeDirectory">;
  log: Logger;
  /** Whether a Run of this pod still works in the workspace `namespace/name`. */
  inUse(wsKey: string): boolean;
  /** First retry delay after a failed cleanup (doubles up to 30 s). */
  retryMs?: number;
  /** How often to try listing workspaces again when it is refused (30 s). */
  probeRetryMs?: number;
}

export type Directory = { dir: string } | { error: string };

const MAX_RETRY_MS = 30_000;

export class WorkspaceDirs {
  private informer: Informer<PersistentWorkspace> | undefined;
  private readonly busy = new Set<string>();
  private readonly retries = new Map<string, { timer: ReturnType<typeof setTimeout>; delayMs: number }>();
  private stopped = false;

  constructor(private readonly d: WorkspaceDirsDeps) {}

  /**
   * Starts the watch in the background. A cluster without the CRD, or a Role without the rule
   * (a Runtime rendered by an older controller), is not fatal: Runs without a workspace go on,
   * and the watch is tried again every `probeRetryMs` (the Run path reads workspaces directly).
   */
  start(): void {
    void this.run();
  }

  private async run(): Promise<void> {
    const base = path(WorkspaceResource, this.d.o.pod.namespace);
    const selector = `status.boundPod=${this.d.o.pod.name}`;
    let fieldSelector: string | undefined = selector;
    for (let warned = false; !this.stopped; ) {
      try {
        await this.d.client.list(base, { fieldSelector: selector, limit: 1 });
        break;
      } catch (e) {
        if (e instanceof KubeError && e.code === 400) {
          fieldSelector = undefined;
          this.d.log.warn(
            "the PersistentWorkspace CRD has no selectable status.boundPod; watching every workspace of the namespace",
          );
          break;
        }
        if (!warned)
          this.d.log.warn(
            { err: (e as Error).message },
            "cannot list PersistentWorkspaces (CRD missing, or runtimed's Role predates them); retrying",
          );
        warned = true;
        await Bun.sleep(this.d.probeRetryMs ?? 30_000);
      }
    }
    if (this.stopped) return;
    const informer = new Informer<PersistentWorkspace>(this.d.client, base, {
      ...(fieldSelector ? { fieldSelector } : {}),
    });
    this.informer = informer;
    informer.on({
      add: (ws) => void this.check(ws),
      update: (ws) => void this.check(ws),
      error: (e) => this.d.log.warn({ err: e }, "PersistentWorkspace watch failed; resuming"),
    });
    informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer?.stop();
    for (const r of this.retries.values()) clearTimeout(r.timer);
    this.retries.clear();
  }

  private ours(ws: PersistentWorkspace | undefined): ws is PersistentWorkspace {
    return ws?.status?.boundPodUID === this.d.o.pod.uid;
  }

  /**
   * The working directory (relative to the Runtime Server's workspace root) of a Run naming a
   * workspace, or why it has none. The watch may not have seen the binding yet when the Run's
   * bind arrives: then the workspace is read once from the apiserver.
   */
  async directoryFor(run: Run): Promise<Directory> {
    const name = run.spec.workspace?.name ?? "";
    const ns = run.metadata.namespace ?? "";
    let ws = this.informer?.get(`${ns}/${name}`);
    if (!this.ours(ws)) {
      try {
        ws = await this.d.client.get<PersistentWorkspace>(path(WorkspaceResource, ns, name));
      } catch (e) {
        if (e instanceof KubeError && e.code === 404)
          return { error: `PersistentWorkspace "${name}" does not exist any more` };
        return { error: `PersistentWorkspace "${name}" could not be read: ${(e as Error).message}` };
      }
    }
    if (!this.ours(ws)) {
      const s = (ws as PersistentWorkspace | undefined)?.status;
      return {
        error: `PersistentWorkspace "${name}" is not bound to this pod (${s?.phase ?? "no status"}, pod ${s?.boundPod ?? "none"})`,
      };
    }
    return { dir: workspaceDirectory(name, ws.metadata.uid ?? "") };
  }

  /** A Run of this pod stopped using `wsKey`: a deletion waiting for it may go on. */
  released(wsKey: string): void {
    const ws = this.informer?.get(wsKey);
    if (ws) void this.check(ws);
  }

  /** Cleans up after a deleted workspace bound here, when nothing uses it any more (public for tests). */
  async check(ws: PersistentWorkspace): Promise<void> {
    const key = keyOf(ws);
    if (this.stopped || this.busy.has(key)) return;
    if (!ws.metadata.deletionTimestamp || !ws.metadata.finalizers?.includes(WORKSPACE_FINALIZER)) return;
    if (!this.ours(ws)) return;
    if ((ws.status?.activeRuns ?? 0) > 0 || this.d.inUse(key)) return;
    this.busy.add(key);
    const dir = workspaceDirectory(ws.metadata.name ?? "", ws.metadata.uid ?? "");
    const log = this.d.log.child({ workspace: key, dir });
    try {
      if ((ws.spec.reclaimPolicy ?? ReclaimPolicy.Delete) === ReclaimPolicy.Delete) {
        const res = await this.d.runtime.removeDirectory({ path: dir });
        log.info({ existed: res.existed }, "workspace deleted: directory removed");
      } else {
        log.info("workspace deleted: directory retained (reclaimPolicy Retain)");
      }
      await this.removeFinalizer(ws);
      const r = this.retries.get(key);
      if (r) clearTimeout(r.timer);
      this.retries.delete(key);
    } catch (e) {
      const err = ConnectError.from(e);
      const unimplemented = !(e instanceof KubeError) && err.code === Code.Unimplemented;
      const delayMs = this.retryLater(key);
      log.warn(
        { err: e instanceof KubeError ? e.message : err.rawMessage, retryInMs: delayMs },
        unimplemented
          ? "the Runtime Server has no RemoveDirectory (it predates PersistentWorkspaces): the directory and the finalizer stay; update the runtime image, or remove the finalizer by hand to keep the files"
          : "workspace cleanup failed; retrying",
      );
    } finally {
      this.busy.delete(key);
    }
  }

  private retryLater(key: string): number {
    const prev = this.retries.get(key);
    const delayMs = prev ? Math.min(prev.delayMs * 2, MAX_RETRY_MS) : (this.d.retryMs ?? 1000);
    if (prev) clearTimeout(prev.timer);
    const timer = setTimeout(() => {
      const ws = this.informer?.get(key);
      if (ws) void this.check(ws);
    }, delayMs);
    timer.unref?.();
    this.retries.set(key, { timer, delayMs });
    return delayMs;
  }

  private async removeFinalizer(ws: PersistentWorkspace): Promise<void> {
    const p = path(WorkspaceResource, ws.metadata.namespace, ws.metadata.name);
    let current: PersistentWorkspace | undefined = ws;
    for (let attempt = 0; current; attempt++) {
      const i = current.metadata.finalizers?.indexOf(WORKSPACE_FINALIZER) ?? -1;
      if (i < 0) return;
      try {
        await this.d.client.patch(
          p,
          [
            { op: "test", path: "/metadata/uid", value: ws.metadata.uid },
            { op: "test", path: `/metadata/finalizers/${i}`, value: WORKSPACE_FINALIZER },
            { op: "remove", path: `/metadata/finalizers/${i}` },
          ],
          "json",
        );
        return;
      } catch (e) {
        if (e instanceof KubeError && e.code === 404) return;
        if (!(e instanceof KubeError && e.code === 422) || attempt >= 3) throw e;
        // The list changed (someone else's finalizer): read it again and retry.
        current = await this.d.client.get<PersistentWorkspace>(p).catch((err) => {
          if (err instanceof KubeError && err.code === 404) return undefined;
          throw err;
        });
        if (current && current.metadata.uid !== ws.metadata.uid) return;
      }
    }
  }
}
