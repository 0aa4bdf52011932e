/**
 * Writes a pod's status through the status subresource, only when it changed, and removes a
 * terminated pod object. Every write carries the pod's UID (a merge patch of `metadata.uid`):
 * the apiserver refuses it for a same-named replacement, so a stale runtime never writes into a
 * new pod. The informer's copy can lag behind our own last write; the comparison then starts
 * from what was written, so the same change is not written twice.
 */
import { isNotFound, type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Pod, PodStatus } from "../api/types.ts";
import type { PodRuntime } from "./pod-runtime.ts";
import { buildStatus, statusFingerprint } from "./pod-status.ts";

export interface WrittenStatus {
  fingerprint: string;
  status: PodStatus;
  resourceVersion: bigint;
}

const rv = (p: Pod) => BigInt(p.metadata.resourceVersion || "0");

/** The pod object was replaced (same name, new UID) or is gone: nothing to write into. */
const isReplaced = (e: unknown) => isNotFound(e) || KubeError.is(e, 409) || KubeError.is(e, 422);

export class PodStatusWriter {
  private readonly written = new Map<string, WrittenStatus>();

  constructor(
    private readonly client: KubeClient,
    private readonly log: Logger,
  ) {}

  /** The status the next comparison starts from: ours if the cache has not caught up with it. */
  private base(pod: Pod): PodStatus | undefined {
    const w = this.written.get(pod.metadata.uid ?? "");
    return w && rv(pod) < w.resourceVersion ? w.status : pod.status;
  }

  /** Computes the status of `rt` and patches it if it differs; returns whether it wrote. */
  async write(rt: PodRuntime, pod: Pod): Promise<boolean> {
    const uid = pod.metadata.uid ?? "";
    const base = this.base(pod);
    const status = buildStatus(rt, { ...pod, status: base });
    const fingerprint = statusFingerprint(status);
    if (fingerprint === statusFingerprint(base)) return false;
    try {
      const res = await this.client.patch<Pod>(
        path(R.pods, pod.metadata.namespace, pod.metadata.name, "status"),
        { metadata: { uid }, status },
        "merge",
      );
      this.written.set(uid, { fingerprint, status, resourceVersion: rv(res) });
      return true;
    } catch (e) {
      if (isReplaced(e)) return false;
      throw e;
    }
  }

  /** Deletes the pod object now (its containers are gone), only if it still has this UID. */
  async remove(pod: Pod): Promise<void> {
    try {
      await this.client.delete(path(R.pods, pod.metadata.namespace, pod.metadata.name), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      });
      this.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, "pod terminated and removed");
    } catch (e) {
      if (!isReplaced(e)) throw e;
    }
  }

  forget(uid: string): void {
    this.written.delete(uid);
  }
}
