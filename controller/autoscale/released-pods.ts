/**
 * Pods the autoscaler released from their ReplicaSet but did not get to delete (the controller
 * stopped between the two writes): they carry the drain annotation, the Runtime's label and no
 * `app.kubernetes.io/managed-by`, so no informer sees them and nothing else would remove them.
 * Swept once each time a controller starts leading.
 */
import { Labels } from "@kruntimes/api";
import { type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import type { Pod } from "../kube-types.ts";
import { DRAIN_ANNOTATION } from "../scheduler/cache/pod-info.ts";

export async function sweepReleasedPods(
  client: KubeClient,
  namespace: string | undefined,
  log: Logger,
): Promise<void> {
  try {
    const list = await client.list<Pod>(path(R.pods, namespace), {
      labelSelector: `${Labels.runtime},!${Labels.managedBy}`,
    });
    for (const p of list.items) {
      const owned = (p.metadata as { ownerReferences?: { controller?: boolean }[] }).ownerReferences?.some(
        (o) => o.controller,
      );
      if (p.metadata.annotations?.[DRAIN_ANNOTATION] === undefined || owned || p.metadata.deletionTimestamp)
        continue;
      await client
        .delete(path(R.pods, p.metadata.namespace, p.metadata.name), {
          apiVersion: "v1",
          kind: "DeleteOptions",
          preconditions: { uid: p.metadata.uid },
        })
        .catch((e: unknown) => {
          if (!(e instanceof KubeError && (e.code === 404 || e.code === 409))) throw e;
        });
      log.info(
        { pod: `${p.metadata.namespace}/${p.metadata.name}` },
        "deleted a pod a scale-down had released",
      );
    }
  } catch (err) {
    log.warn(
      { err },
      "could not sweep pods released by a scale-down; they are retried at the next leadership",
    );
  }
}
