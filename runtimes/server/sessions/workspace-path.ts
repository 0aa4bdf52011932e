/**
 * Path confinement, the session's security boundary. Every path a caller names is relative to the
 * workspace. `parsePath` refuses absolute paths, ".." components and NUL bytes outright. `resolve`
 * then walks the components one at a time from an open descriptor of the workspace: each
 * directory is opened relative to the previous one's descriptor (through /proc/self/fd/N, the
 * Linux equivalent of openat) with O_NOFOLLOW, so nothing is ever followed implicitly. A symlink
 * met on the way is read and its target's components are walked the same way: a relative target
 * from the link's directory, an absolute one only when it names a place under the workspace root;
 * a ".." that would climb above the workspace is refused. The walk ends on an open directory
 * descriptor and a final name, so the caller's operation acts on exactly what was checked (no
 * window between the check and the use). docs/concepts/sessions-security.md states the rules.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, readlinkSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import { denied, errnoOf, fsError, sessionError } from "./session-error.ts";

/** Linux O_CLOEXEC (node:fs does not export it): descriptors never leak into commands. */
export const O_CLOEXEC = 0o2000000;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | O_CLOEXEC;
/** Symlinks followed in one resolution at most (Linux's own limit). */
export const MAX_LINKS = 40;
const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

/** The path of `name` inside the directory open as `fd` (openat semantics for path-based calls). */
export function at(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

/**
 * Splits a workspace-relative path into its components. "" and "." components vanish ("a//./b"
 * is "a/b", "" is the workspace itself); absolute paths, ".." and NUL bytes are refused.
 */
export function parsePath(path: string): string[] {
  if (path.includes("\0")) throw denied(path, "it contains a NUL byte");
  if (path.startsWith("/")) {
    throw denied(path, "absolute paths are not allowed; paths are relative to the session's workspace");
  }
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) {
    throw sessionError(Code.InvalidArgument, `path is longer than ${MAX_PATH_BYTES} bytes`);
  }
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") throw denied(path, '".." components are not allowed');
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) {
      throw sessionError(Code.InvalidArgument, `path component is longer than ${MAX_NAME_BYTES} bytes`);
    }
    parts.push(part);
  }
  return parts;
}

/** The normalized form of a relative path ("a//./b/" → "a/b"), as paths are reported. */
export function normalizePath(path: string): string {
  return parsePath(path).join("/");
}

/** Where a resolution ended: an open directory and the final name in it. */
export interface Resolved {
  /** Open descriptor of the directory holding the target (inside the workspace, checked). */
  dir: number;
  /** The final component; undefined when the target is `dir` itself. */
  name: string | undefined;
  /** The target's real path, relative to the workspace root ("" = the root). */
  real: string;
  close(): void;
}

export interface ResolveOptions {
  /** Follow a symlink in the final component (opening operations) or not (lstat-like ones). */
  followFinal: boolean;
  /** Create missing directories on the way (not the final component) with this mode. */
  createDirs?: number | undefined;
}

/** One session's workspace directory. `root` must be a real path (no symlinks in it). */
export class Workspace {
  private readonly rootParts: string[];

  constructor(readonly root: string) {
    this.rootParts = root.split("/").filter((p) => p !== "");
  }

  /** Walks `path` (see the module comment); the caller closes the result. */
  resolve(path: string, options: ResolveOptions): Resolved {
    const queue = parsePath(path);
    const stack = [this.openRoot()];
    const real: string[] = [];
    let links = 0;
    let creations = 0;
    const finish = (name: string | undefined): Resolved => {
      const dir = stack.pop() as number;
      for (const fd of stack) closeSync(fd);
      stack.length = 0;
      try {
        this.verify(dir, path);
      } catch (error) {
        closeSync(dir);
        throw error;
      }
      const parts = name === undefined ? real : [...real, name];
      return { dir, name, real: parts.join("/"), close: () => closeSync(dir) };
    };
    try {
      while (queue.length > 0) {
        const name = queue.shift() as string;
        if (name === "..") {
          if (stack.length === 1) throw denied(path, "a symlink on the way leads outside the workspace");
          closeSync(stack.pop() as number);
          real.pop();
          continue;
        }
        const top = stack[stack.length - 1] as number;
        const final = queue.length === 0;
        if (final && !options.followFinal) return finish(name);
        let fd: number;
        try {
          fd = openSync(at(top, name), DIR_FLAGS);
        } catch (error) {
          const errno = errnoOf(error);
          if (errno === "ENOENT") {
            if (final) return finish(name);
            if (options.createDirs !== undefined && creations++ < 1000) {
              try {
                mkdirSync(at(top, name), options.createDirs);
              } catch (mkdirError) {
                if (errnoOf(mkdirError) !== "EEXIST") throw fsError(mkdirError, path);
              }
              queue.unshift(name);
              continue;
            }
            throw fsError(error, path);
          }
          if (errno !== "ENOTDIR" && errno !== "ELOOP") throw fsError(error, path);
          const stat = lstatSync(at(top, name));
          if (!stat.isSymbolicLink()) {
            if (final) return finish(name);
            throw fsError(error, path);
          }
          if (++links > MAX_LINKS)
            throw sessionError(
              Code.FailedPrecondition,
              `${JSON.stringify(path)}: too many levels of symbolic links`,
            );
          const target = readlinkSync(at(top, name));
          queue.unshift(...this.linkParts(target, path, stack, real));
          continue;
        }
        stack.push(fd);
        real.push(name);
      }
      return finish(undefined);
    } catch (error) {
      for (const fd of stack) closeSync(fd);
      throw error;
    }
  }

  /** Opens the directory `path` names (following every symlink, each checked); the caller closes it. */
  openDirectory(path: string, createMode?: number): { fd: number; real: string } {
    const resolved = this.resolve(path, { followFinal: true, createDirs: createMode });
    if (resolved.name === undefined) return { fd: resolved.dir, real: resolved.real };
    try {
      if (createMode !== undefined) {
        try {
          mkdirSync(at(resolved.dir, resolved.name), createMode);
        } catch (error) {
          if (errnoOf(error) !== "EEXIST") throw error;
        }
        const fd = openSync(at(resolved.dir, resolved.name), DIR_FLAGS);
        this.verify(fd, path);
        return { fd, real: resolved.real };
      }
      // The walk stopped on a name that is missing or not a directory.
      lstatSync(at(resolved.dir, resolved.name));
      throw sessionError(Code.FailedPrecondition, `${JSON.stringify(path)} is not a directory`);
    } catch (error) {
      throw fsError(error, path);
    } finally {
      resolved.close();
    }
  }

  /** The components a symlink's target adds to the walk (an absolute target restarts at the root). */
  private linkParts(target: string, path: string, stack: number[], real: string[]): string[] {
    const parts = target.split("/").filter((p) => p !== "" && p !== ".");
    if (!target.startsWith("/")) return parts;
    const inside = this.rootParts.every((p, i) => parts[i] === p);
    if (!inside) throw denied(path, `a symlink on the way points outside the workspace (${target})`);
    while (stack.length > 1) closeSync(stack.pop() as number);
    real.length = 0;
    return parts.slice(this.rootParts.length);
  }

  private openRoot(): number {
    try {
      return openSync(this.root, DIR_FLAGS);
    } catch (error) {
      throw sessionError(
        Code.FailedPrecondition,
        `the session's workspace is gone: ${errnoOf(error) || String(error)}`,
      );
    }
  }

  /** Defence in depth: the directory open as `fd` is (still) the workspace or under it. */
  verify(fd: number, path: string): void {
    const where = readlinkSync(at(fd));
    if (where !== this.root && !where.startsWith(`${this.root}/`)) {
      throw denied(path, "it resolves outside the workspace");
    }
  }
}
