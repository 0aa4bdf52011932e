/**
 * The directories behind a pod's volumes, under `<podDir>/volumes/<name>`: emptyDir is a private
 * directory shared by all containers of the pod; configMap, secret, downwardAPI and projected
 * volumes are written atomically and mounted read-only (as kubelet does); hostPath is the host
 * path itself, checked or created per its `type`. `materialize` is idempotent and refreshes the
 * projected contents, so each pod resync picks up changed ConfigMaps and rotated tokens.
 */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Volume } from "../api/types.ts";
import { writeAtomically } from "./atomic-writer.ts";
import { type PayloadContext, VolumeError, volumePayload } from "./payloads.ts";

export interface VolumeDir {
  dir: string;
  readOnly: boolean;
}

function hostPathDir(v: Volume & { hostPath: { path: string; type?: string } }): VolumeDir {
  const p = v.hostPath.path;
  const type = v.hostPath.type ?? "";
  const st = existsSync(p) ? statSync(p) : undefined;
  switch (type) {
    case "DirectoryOrCreate":
      if (!st) mkdirSync(p, { recursive: true, mode: 0o755 });
      else if (!st.isDirectory()) throw new VolumeError(`hostPath ${p} exists and is not a directory`);
      break;
    case "FileOrCreate":
      if (!st) {
        mkdirSync(dirname(p), { recursive: true });
        closeSync(openSync(p, "a", 0o644));
      } else if (!st.isFile()) throw new VolumeError(`hostPath ${p} exists and is not a file`);
      break;
    case "Directory":
      if (!st?.isDirectory()) throw new VolumeError(`hostPath type check failed: ${p} is not a directory`);
      break;
    case "File":
      if (!st?.isFile()) throw new VolumeError(`hostPath type check failed: ${p} is not a file`);
      break;
    case "Socket":
      if (!st?.isSocket()) throw new VolumeError(`hostPath type check failed: ${p} is not a socket`);
      break;
    case "":
      break;
    default:
      if (!st) throw new VolumeError(`hostPath ${p} does not exist (type ${type})`);
  }
  return { dir: p, readOnly: false };
}

export class PodVolumes {
  constructor(readonly podDir: string) {}

  dirOf(name: string): string {
    return join(this.podDir, "volumes", name);
  }

  /** Creates or refreshes every volume; throws VolumeError (pod stays ContainerCreating) or API errors. */
  async materialize(volumes: Volume[], ctx: PayloadContext): Promise<Map<string, VolumeDir>> {
    const out = new Map<string, VolumeDir>();
    for (const v of volumes) {
      if (v.hostPath) {
        out.set(v.name, hostPathDir(v as Volume & { hostPath: { path: string } }));
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
