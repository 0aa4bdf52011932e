/**
 * `persistentVolumeClaim` pod volumes, resolved the way kubelet's volume manager does: the claim
 * must exist and be Bound (by kube-controller-manager's PV binder — the agent never binds) to a
 * PersistentVolume whose `claimRef` names this very claim (same uid); the volume's source must be
 * a directory on this host (`hostPath`, with its type check, or `local`, which must exist). The
 * directory itself is mounted, read-only when the pod's volume says `readOnly`. Anything else is
 * a VolumeError: the pod waits in ContainerCreating and the next sync looks again, so a pod
 * created before its claim binds starts once it does.
 */
import { existsSync, statSync } from "node:fs";
import type { ClaimSource } from "../api/claim-source.ts";
import type { PersistentVolume, PersistentVolumeClaim } from "../api/types.ts";
import { checkHostPath } from "./host-path.ts";
import { VolumeError } from "./payloads.ts";

export interface ClaimMount {
  dir: string;
  readOnly: boolean;
}

/** The host directory behind `claim` (bound to `pv`); pure apart from the hostPath/local checks. */
export function claimMount(
  namespace: string,
  claimName: string,
  claim: PersistentVolumeClaim | undefined,
  pv: PersistentVolume | undefined,
  readOnly: boolean,
): ClaimMount {
  const what = `persistentvolumeclaim "${claimName}"`;
  if (!claim) throw new VolumeError(`${what} not found in namespace ${namespace}`);
  if (claim.metadata.deletionTimestamp) throw new VolumeError(`${what} is being deleted`);
  const volumeName = claim.spec?.volumeName;
  if (claim.status?.phase !== "Bound" || !volumeName)
    throw new VolumeError(
      `${what} is not bound (phase ${claim.status?.phase ?? "Pending"}); waiting for a matching PersistentVolume`,
    );
  if (!pv)
    throw new VolumeError(`${what} is bound to persistentvolume "${volumeName}", which does not exist`);
  const ref = pv.spec?.claimRef;
  if (ref?.uid !== claim.metadata.uid || ref?.name !== claimName || ref?.namespace !== namespace)
    throw new VolumeError(
      `persistentvolume "${volumeName}" is not bound to ${what} (its claimRef is ${ref ? `${ref.namespace}/${ref.name}` : "empty"})`,
    );
  if (pv.spec?.hostPath) {
    checkHostPath(pv.spec.hostPath.path, pv.spec.hostPath.type);
    return { dir: pv.spec.hostPath.path, readOnly };
  }
  if (pv.spec?.local) {
    const p = pv.spec.local.path;
    if (!existsSync(p) || !statSync(p).isDirectory())
      throw new VolumeError(`local persistentvolume "${volumeName}": ${p} is not a directory on this host`);
    return { dir: p, readOnly };
  }
  const kinds = Object.keys(pv.spec ?? {}).filter(
    (k) =>
      ![
        "accessModes",
        "capacity",
        "claimRef",
        "persistentVolumeReclaimPolicy",
        "storageClassName",
        "volumeMode",
        "nodeAffinity",
        "mountOptions",
      ].includes(k),
  );
  throw new VolumeError(
    `persistentvolume "${volumeName}" has a ${kinds.join("/") || "unknown"} source; the local node agent mounts only hostPath and local volumes`,
  );
}

/** Reads the claim and its volume with the node's identity, then resolves as above. */
export async function resolveClaim(
  claims: ClaimSource,
  namespace: string,
  v: { claimName: string; readOnly?: boolean },
): Promise<ClaimMount> {
  const claim = await claims.claim(namespace, v.claimName);
  const name = claim?.status?.phase === "Bound" ? claim.spec?.volumeName : undefined;
  const pv = name ? await claims.volume(name) : undefined;
  return claimMount(namespace, v.claimName, claim, pv, Boolean(v.readOnly));
}
