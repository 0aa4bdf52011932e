/** FileInfo of one path, from lstat (a symlink is described as itself, with its target). */
import { type BigIntStats, lstatSync, readlinkSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { type FileInfo, FileInfoSchema, FileType } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";

export function fileType(stat: BigIntStats): FileType {
  if (stat.isFile()) return FileType.FILE;
  if (stat.isDirectory()) return FileType.DIRECTORY;
  if (stat.isSymbolicLink()) return FileType.SYMLINK;
  return FileType.OTHER;
}

/** Describes `stat` of the workspace-relative `path`; `linkAt` is read for symlinks. */
export function toFileInfo(path: string, stat: BigIntStats, linkAt?: string | Buffer): FileInfo {
  const slash = path.lastIndexOf("/");
  let linkTarget = "";
  if (stat.isSymbolicLink() && linkAt !== undefined) {
    try {
      linkTarget = readlinkSync(linkAt, "utf8");
    } catch {
      // removed since the lstat: reported without its target
    }
  }
  return create(FileInfoSchema, {
    path,
    name: slash === -1 ? path : path.slice(slash + 1),
    type: fileType(stat),
    size: stat.size,
    mode: Number(stat.mode & 0o7777n),
    modifiedMicros: stat.mtimeNs / 1000n,
    linkTarget,
  });
}

/** lstat of `at` (a /proc/self/fd path) described as `path`. */
export function lstatInfo(path: string, at: string): FileInfo {
  return toFileInfo(path, lstatSync(at, { bigint: true }), at);
}
