/**
 * What a Run left in `$KRUNTIME_ARTIFACTS_DIR`, checked before anything is uploaded: each
 * top-level entry is one artifact (a regular file as-is, a directory as a tar.gz of its regular
 * files and directories). Symlinks, devices, sockets, FIFOs, names outside the safe set and more
 * than `maxCount` entries reject the whole set with one message that says what to change —
 * nothing is uploaded then, so a Run never stores half of what it meant to.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Top-level names: what `status.artifactRefs[].name` accepts, without `/`. */
const NAME = /^[A-Za-z0-9._-]{1,253}$/;

export interface DirEntry {
  /** Path inside the archive, `/`-separated, no leading `./`. */
  rel: string;
  kind: "file" | "dir";
  size: number;
  /** Executable by its owner: kept as 0755 in the archive, everything else is 0644. */
  exec: boolean;
}

export type Planned =
  | { name: string; kind: "file"; path: string; size: number }
  | { name: string; kind: "dir"; path: string; entries: DirEntry[]; size: number };

export class ArtifactRejection extends Error {
  override name = "ArtifactRejection";
}

export interface CollectLimits {
  maxCount: number;
  /** Raw bytes; a directory's archive is checked again after compression. */
  maxArtifactBytes: number;
  maxTotalBytes: number;
}

function kindOf(st: Awaited<ReturnType<typeof lstat>>): string {
  if (st.isSymbolicLink()) return "a symlink";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isBlockDevice() || st.isCharacterDevice()) return "a device";
  return "a special file";
}

async function walk(root: string, rel: string, out: DirEntry[], problems: string[]): Promise<void> {
  const names = (await readdir(join(root, rel))).sort();
  for (const n of names) {
    const r = rel ? `${rel}/${n}` : n;
    if (Buffer.byteLength(r) > 255 || n.includes("\n"))
      problems.push(`${r}: path longer than 255 bytes or contains a newline`);
    const st = await lstat(join(root, r));
    if (st.isDirectory()) {
      out.push({ rel: r, kind: "dir", size: 0, exec: true });
      await walk(root, r, out, problems);
    } else if (st.isFile()) out.push({ rel: r, kind: "file", size: st.size, exec: (st.mode & 0o100) !== 0 });
    else problems.push(`${r} is ${kindOf(st)}`);
  }
}

/** Empty list when the directory is missing or empty (the common case: no artifacts). */
export async function collect(dir: string, limits: CollectLimits): Promise<Planned[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  if (names.length === 0) return [];
  const problems: string[] = [];
  if (names.length > limits.maxCount)
    problems.push(
      `${names.length} entries, at most ${limits.maxCount} are allowed (put files into a directory)`,
    );
  const out: Planned[] = [];
  let total = 0;
  for (const name of names) {
    if (!NAME.test(name) || name === "." || name === "..") {
      problems.push(`${JSON.stringify(name)}: names are letters, digits, '.', '_' and '-'`);
      continue;
    }
    const path = join(dir, name);
    const st = await lstat(path);
    if (st.isFile()) {
      out.push({ name, kind: "file", path, size: st.size });
      total += st.size;
      if (st.size > limits.maxArtifactBytes)
        problems.push(
          `${name}: ${st.size} bytes, more than the store's maxArtifactBytes ${limits.maxArtifactBytes}`,
        );
    } else if (st.isDirectory()) {
      const entries: DirEntry[] = [];
      const inner: string[] = [];
      await walk(path, "", entries, inner);
      for (const p of inner) problems.push(`${name}/${p}`);
      const size = entries.reduce((a, e) => a + e.size, 0);
      total += size;
      if (size > limits.maxArtifactBytes)
        problems.push(
          `${name}/: ${size} bytes of files, more than the store's maxArtifactBytes ${limits.maxArtifactBytes}`,
        );
      out.push({ name, kind: "dir", path, entries, size });
    } else problems.push(`${name} is ${kindOf(st)}`);
  }
  if (total > limits.maxTotalBytes)
    problems.push(`${total} bytes in all, more than the store's maxTotalBytes ${limits.maxTotalBytes}`);
  if (problems.length > 0) {
    const shown = problems.slice(0, 8).join("; ");
    const more = problems.length > 8 ? ` (and ${problems.length - 8} more)` : "";
    throw new ArtifactRejection(
      `artifacts rejected, none stored: ${shown}${more}. Only regular files and directories of them, named [A-Za-z0-9._-], go into $KRUNTIME_ARTIFACTS_DIR`,
    );
  }
  return out;
}
