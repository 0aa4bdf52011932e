/**
 * RuntimeService.RemoveDirectory: deletes a directory under the workspace root, as the runtime
 * container's user (who wrote the files). Guards: the path is relative, names something strictly
 * under the root — also after resolving symlinks in its parents, so a link planted by a Run cannot
 * aim the removal outside — and no running execution or registration works in it.
 */
import { lstatSync, realpathSync, rmSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { RuntimeServerError } from "./errors.ts";

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

function within(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Removes `<root>/<path>`; `busy` are the working directories of live executions and registrations. */
export function removeDirectory(root: string, path: string, busy: Iterable<string>): { existed: boolean } {
  if (path === "" || isAbsolute(path)) {
    throw new RuntimeServerError(
      "invalid_argument",
      `path must be relative to the workspace root, got "${path}"`,
    );
  }
  const target = resolve(root, path);
  if (!inside(root, target)) {
    throw new RuntimeServerError("invalid_argument", `path ${path} is the workspace root or leaves it`);
  }
  let parent: string;
  try {
    parent = realpathSync(dirname(target));
  } catch {
    return { existed: false }; // a parent is missing: so is the directory
  }
  const realRoot = realpathSync(root);
  const real = resolve(parent, target.slice(dirname(target).length + 1));
  if (!inside(realRoot, real)) {
    throw new RuntimeServerError("invalid_argument", `path ${path} resolves outside the workspace root`);
  }
  for (const cwd of busy) {
    if (within(target, cwd) || within(real, cwd)) {
      throw new RuntimeServerError(
        "failed_precondition",
        `path ${path} is in use: a running execution or function works in ${cwd}`,
      );
    }
  }
  try {
    lstatSync(real);
  } catch {
    return { existed: false };
  }
  rmSync(real, { recursive: true, force: true });
  return { existed: true };
}
