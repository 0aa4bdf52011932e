/**
 * The one-shot file operations of a session: Stat, MakeDir, Remove, Rename and ReadFile. Each
 * resolves its path with the workspace's confined walk and then acts on the open directory and
 * final name it got, so what was checked is what is used. Stat, Remove and Rename act on a final
 * symlink itself; ReadFile follows it only while it stays inside the workspace.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
} from "node:fs";
import { Code } from "@connectrpc/connect";
import type { FileInfo } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { lstatInfo, toFileInfo } from "./file-info.ts";
import { errnoOf, fsError, sessionError } from "./session-error.ts";
import { at, normalizePath, O_CLOEXEC, type Resolved, type Workspace } from "./workspace-path.ts";

/** Bytes per ReadFile chunk. */
export const READ_CHUNK_BYTES = 64 * 1024;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | O_CLOEXEC;

function within<T>(workspace: Workspace, path: string, followFinal: boolean, use: (r: Resolved) => T): T {
  const resolved = workspace.resolve(path, { followFinal });
  try {
    return use(resolved);
  } catch (error) {
    throw fsError(error, path);
  } finally {
    resolved.close();
  }
}

function target(r: Resolved): string {
  return at(r.dir, r.name);
}

export function stat(workspace: Workspace, path: string): FileInfo {
  const rel = normalizePath(path);
  return within(workspace, path, false, (r) =>
    // The workspace itself: describe the open directory (its /proc/self/fd path is a link).
    r.name === undefined ? toFileInfo(rel, fstatSync(r.dir, { bigint: true })) : lstatInfo(rel, target(r)),
  );
}

export function makeDir(workspace: Workspace, path: string, parents: boolean, mode: number): FileInfo {
  const rel = normalizePath(path);
  const bits = mode === 0 ? 0o755 : mode & 0o7777;
  const resolved = workspace.resolve(path, { followFinal: parents, createDirs: parents ? 0o755 : undefined });
  try {
    if (resolved.name === undefined) {
      if (!parents) throw sessionError(Code.AlreadyExists, `${JSON.stringify(rel)}: already exists`);
      return toFileInfo(rel, fstatSync(resolved.dir, { bigint: true }));
    }
    try {
      mkdirSync(target(resolved), bits);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST" || !parents) throw error;
      // An existing directory is fine with parents; anything else there is not.
      if (!lstatSync(target(resolved)).isDirectory()) {
        throw sessionError(Code.AlreadyExists, `${JSON.stringify(rel)}: exists and is not a directory`);
      }
      return lstatInfo(rel, target(resolved));
    }
    if (mode !== 0) chmodSync(target(resolved), bits); // the umask applied to mkdir's mode
    return lstatInfo(rel, target(resolved));
  } catch (error) {
    throw fsError(error, rel);
  } finally {
    resolved.close();
  }
}

/** Removes a file, symlink or directory; false when nothing was there. */
export function remove(workspace: Workspace, path: string, recursive: boolean): boolean {
  const rel = normalizePath(path);
  if (rel === "") throw sessionError(Code.InvalidArgument, "the workspace itself cannot be removed");
  return within(workspace, path, false, (r) => {
    const at = target(r);
    let isDir: boolean;
    try {
      isDir = lstatSync(at).isDirectory();
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return false;
      throw error;
    }
    if (!isDir) unlinkSync(at);
    else if (recursive) rmSync(at, { recursive: true, force: true });
    else rmdirSync(at);
    return true;
  });
}

export function rename(workspace: Workspace, from: string, to: string, overwrite: boolean): FileInfo {
  const fromRel = normalizePath(from);
  const toRel = normalizePath(to);
  if (fromRel === "" || toRel === "") {
    throw sessionError(Code.InvalidArgument, "the workspace itself cannot be renamed or replaced");
  }
  return within(workspace, from, false, (source) =>
    within(workspace, to, false, (dest) => {
      lstatSync(target(source));
      if (!overwrite) {
        let exists = true;
        try {
          lstatSync(target(dest));
        } catch (error) {
          if (errnoOf(error) !== "ENOENT") throw error;
          exists = false;
        }
        if (exists) throw sessionError(Code.AlreadyExists, `${JSON.stringify(toRel)}: already exists`);
      }
      renameSync(target(source), target(dest));
      return lstatInfo(toRel, target(dest));
    }),
  );
}

/** An open file for ReadFile: a regular file inside the workspace, checked after opening. */
export interface OpenedFile {
  fd: number;
  info: FileInfo;
}

export function openForRead(workspace: Workspace, path: string): OpenedFile {
  const rel = normalizePath(path);
  return within(workspace, path, true, (r) => {
    if (r.name === undefined)
      throw sessionError(Code.FailedPrecondition, `${JSON.stringify(rel)} is a directory`);
    let fd: number;
    try {
      fd = openSync(target(r), READ_FLAGS);
    } catch (error) {
      if (errnoOf(error) === "ELOOP") {
        throw sessionError(Code.FailedPrecondition, `${JSON.stringify(rel)} changed while it was opened`);
      }
      throw error;
    }
    try {
      const stat = fstatSync(fd, { bigint: true });
      if (!stat.isFile()) {
        throw sessionError(
          Code.FailedPrecondition,
          `${JSON.stringify(rel)} is ${stat.isDirectory() ? "a directory" : "not a regular file"}`,
        );
      }
      return { fd, info: toFileInfo(rel, stat) };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  });
}

/** Reads up to `length` bytes (0 = to the end) from `offset`, in chunks. Closes the file. */
export async function* readChunks(
  file: OpenedFile,
  offset: number,
  length: number,
): AsyncGenerator<Uint8Array> {
  try {
    let position = offset;
    const end = length === 0 ? Number.POSITIVE_INFINITY : offset + length;
    while (position < end) {
      const want = Math.min(READ_CHUNK_BYTES, end - position);
      const buffer = Buffer.allocUnsafe(want);
      const n = readSync(file.fd, buffer, 0, want, position);
      if (n === 0) return;
      position += n;
      yield n === want ? buffer : buffer.subarray(0, n);
    }
  } finally {
    closeSync(file.fd);
  }
}
