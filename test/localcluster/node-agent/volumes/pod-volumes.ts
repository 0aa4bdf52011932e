/**
 * The directories behind a pod's volumes, under `<podDir>/volumes/<name>`: emptyDir is a private
 * directory shared by all containers of the pod; configMap, secret, downwardAPI and projected
 * volumes are written atomically and mounted read-only (as kubelet does); hostPath is the host
 * path itself, checked or created per its `type`; a persistentVolumeClaim is the host directory of
 * the PersistentVolume it is bound to (claim-volumes.ts). `materialize` is idempotent and refreshes the
 * projected contents, so each pod resync picks up changed ConfigMaps and rotated tokens.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ClaimSource } from "../api/claim-source.ts";
import type { Volume } from "../api/types.ts";
import { writeAtomically } from "./atomic-writer.ts";
import { resolveClaim } from "./claim-volumes.ts";
import { checkHostPath } from "./host-path.ts";
import { type PayloadContext, VolumeError, volumePayload } from "./payloads.ts";

export interface VolumeDir {
  dir: string;
  readOnly: boolean;
}

export class PodVolumes {
  constructor(readonly podDir: string) {}

  dirOf(name: string): string {
    return join(this.podDir, "volumes", name);
  }

  /** Creates or refreshes every volume; throws VolumeError (pod stays ContainerCreating) or API errors. */
  async materialize(
    volumes: Volume[],
    ctx: PayloadContext & { claims: ClaimSource },
  ): Promise<Map<string, VolumeDir>> {
    const out = new Map<string, VolumeDir>();
    for (const v of volumes) {
      if (v.hostPath) {
        checkHostPath(v.hostPath.path, v.hostPath.type);
        out.set(v.name, { dir: v.hostPath.path, readOnly: false });
        continue;
      }
      if (v.persistentVolumeClaim) {
        const m = await resolveClaim(
          ctx.claims,
          ctx.pod.metadata.namespace ?? "default",
          v.persistentVolumeClaim,
        );
        out.set(v.name, m);
        continue;
      }
      const dir = this.dirOf(v.name);
      if (v.emptyDir) {
        mkdirSync(dir, { recursive: true, mode: 0o777 });
        out.set(v.name, { dir, readOnly: false });
        continue;
      }
      const payload = await volumePayload(ctx, v);
      if (!payload)
        throw new VolumeError(
          `volume "${v.name}": this volume type is not supported by the local node agent`,
        );
      writeAtomically(dir, payload);
      out.set(v.name, { dir, readOnly: true });
    }
    return out;
  }

  /** Removes the volume directories (never a hostPath, which is outside podDir). */
  remove(): void {
    rmSync(join(this.podDir, "volumes"), { recursive: true, force: true });
  }
}
