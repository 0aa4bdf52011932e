/**
 * A hostPath directory as kubelet checks it: the `type` decides whether the path is created
 * (`DirectoryOrCreate`, `FileOrCreate`) or must already be a directory, file or socket. Shared by
 * pod `hostPath` volumes and hostPath PersistentVolumes.
 */
import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { VolumeError } from "./payloads.ts";

export function checkHostPath(p: string, type = ""): void {
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
}
