/**
 * Where an attempt works, seen from runtimed (the workspace volume is mounted at the same path in
 * both containers), and a `mkdir -p` below it that never goes through a symbolic link: a Run's
 * working directory — a PersistentWorkspace's above all — holds whatever earlier Runs left, and a
 * link planted there must not send runtimed's writes outside it.
 */
import { chmod, lstat, mkdir, rm, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";

/** The Runtime Server's root for working directories: `<workspace>/runs`. */
export function runsRoot(workspace: string): string {
  return join(workspace, "runs");
}

/**
 * The working directory of an attempt as the Runtime Server resolves `ExecuteRequest.working_dir`:
 * the given one (a PersistentWorkspace's), else `<run_uid>/<attempt>`, below `<workspace>/runs`.
 */
export function attemptDirectory(
  workspace: string,
  workingDir: string,
  runUID: string,
  attempt: number,
): { root: string; rel: string } {
  return { root: runsRoot(workspace), rel: workingDir === "" ? `${runUID}/${attempt}` : workingDir };
}

/**
 * Removes a default (`<run_uid>/<attempt>`) directory runtimed made for an attempt that never
 * reached the Runtime Server, and `<run_uid>` once empty. Never throws: housekeeping.
 */
export async function removeAttemptDirectory(dir: { root: string; rel: string }): Promise<void> {
  const full = join(dir.root, dir.rel);
  await rm(full, { recursive: true, force: true }).catch(() => undefined);
  await rmdir(dirname(full)).catch(() => undefined); // not empty: other attempts remain
}

export class UnsafePath extends Error {
  override name = "UnsafePath";
}

/**
 * Makes `rel` (slash-separated, no `.`/`..`) under `root`, which must exist or be creatable, each
 * missing directory with mode 0777 (the runtime container may run as another user); an existing
 * component that is a link or not a directory is an UnsafePath. Returns the absolute path.
 */
export async function makeDirsBelow(root: string, rel: string): Promise<string> {
  await makeOne(root);
  let dir = root;
  for (const part of rel.split("/").filter((p) => p !== "")) {
    if (part === "." || part === "..") throw new UnsafePath(`${rel}: '.' and '..' are not allowed`);
    dir = join(dir, part);
    await makeOne(dir);
  }
  return dir;
}

async function makeOne(dir: string): Promise<void> {
  try {
    const st = await lstat(dir);
    if (st.isSymbolicLink())
      throw new UnsafePath(`${dir} is a symbolic link; runtimed does not write through links`);
    if (!st.isDirectory()) throw new UnsafePath(`${dir} exists and is not a directory`);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  try {
    await mkdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return makeOne(dir);
  }
  await chmod(dir, 0o777);
}
