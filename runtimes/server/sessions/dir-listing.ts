/**
 * Sorted directory listings for ListFiles. A listing is the directory's names as raw bytes,
 * ordered by those bytes (Buffer.compare: the UTF-8 byte order the contract asks for, not JS
 * string order). Paging through a large directory page by page would re-read and re-sort it for
 * every page, so the last few listings are kept and reused while the directory provably has not
 * changed: same inode, same mtime and ctime, and that mtime lies more than SAFE_AGE_MS before the
 * listing was read. File systems stamp times from a coarse clock (a few ms), so a change made
 * right after a read could carry the same mtime; a directory changed that recently is re-read
 * on every page instead.
 */
import { fstatSync, readdirSync } from "node:fs";
import { at } from "./workspace-path.ts";

const SAFE_AGE_MS = 250n;
const KEPT = 4;

interface Listing {
  ino: bigint;
  dev: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  names: Buffer[];
}

export class DirListings {
  private readonly kept = new Map<string, Listing>();
  /** Listings read from disk (for tests and logs). */
  reads = 0;

  /** The sorted names of the directory open as `fd`. */
  names(fd: number): Buffer[] {
    const before = fstatSync(fd, { bigint: true });
    const key = `${before.dev}:${before.ino}`;
    const cached = this.kept.get(key);
    if (cached !== undefined && cached.mtimeNs === before.mtimeNs && cached.ctimeNs === before.ctimeNs) {
      this.kept.delete(key);
      this.kept.set(key, cached);
      return cached.names;
    }
    const readAtNs = BigInt(Date.now()) * 1_000_000n;
    const names = readdirSync(at(fd), { encoding: "buffer" }) as Buffer[];
    names.sort(Buffer.compare);
    this.reads++;
    this.kept.delete(key);
    if (before.mtimeNs < readAtNs - SAFE_AGE_MS * 1_000_000n) {
      this.kept.set(key, {
        ino: before.ino,
        dev: before.dev,
        mtimeNs: before.mtimeNs,
        ctimeNs: before.ctimeNs,
        names,
      });
      while (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value as string);
    }
    return names;
  }
}

/** Index of the first name ordered after `after` (binary search). */
export function firstAfter(names: readonly Buffer[], after: Buffer): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(names[mid] as Buffer, after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
