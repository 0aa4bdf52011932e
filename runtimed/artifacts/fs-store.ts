/**
 * The filesystem driver: a PersistentVolumeClaim mounted into runtimed (and the maintainer) only,
 * never into the runtime container. Objects are written to a temporary name and renamed into
 * place, so a reader never sees half a file; `location` is the path inside the claim.
 *
 * Directories the store creates are made writable by every user (0777, umask aside): runtimed runs
 * as 65532 or as the Runtime pod's own `runAsUser`, the maintainer as 65532, and deleting a file
 * needs write access to its directory — with 0755 a Runtime running as another user would leave
 * Runs stuck in deletion. Only runtimed and the maintainer mount the claim.
 */
import { createWriteStream } from "node:fs";
import { chmod, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, normalize } from "node:path";
import { ArtifactDriver } from "@kruntimes/api";
import type { ArtifactStoreDriver, StoredObject } from "./store.ts";

export class FilesystemStore implements ArtifactStoreDriver {
  readonly driver = ArtifactDriver.Filesystem;

  /** `root`: where the claim is mounted. */
  constructor(private readonly root: string) {}

  private path(key: string): string {
    const n = normalize(key);
    if (n.startsWith("..") || n.startsWith("/"))
      throw new Error(`artifact key ${JSON.stringify(key)} leaves the store`);
    return join(this.root, n);
  }

  location(key: string): string {
    return key;
  }

  keyOf(location: string): string | undefined {
    const n = normalize(location);
    return n.startsWith("..") || n.startsWith("/") ? undefined : n;
  }

  async put(key: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
    const dest = this.path(key);
    await this.mkdirShared(dirname(dest));
    const tmp = `${dest}.partial-${process.pid}-${Date.now()}`;
    const out = createWriteStream(tmp);
    try {
      for await (const chunk of chunks) {
        if (!out.write(chunk)) await new Promise<void>((r) => out.once("drain", () => r()));
      }
      await new Promise<void>((resolve, reject) =>
        out.end((e?: Error | null) => (e ? reject(e) : resolve())),
      );
      await rename(tmp, dest);
    } catch (e) {
      out.destroy();
      await rm(tmp, { force: true });
      throw e;
    }
  }

  /** `dir` and its missing parents, each chmod 0777 (see the module comment). */
  private async mkdirShared(dir: string): Promise<void> {
    const first = await mkdir(dir, { recursive: true });
    if (!first) return;
    for (let d = dir; d.length >= first.length; d = dirname(d)) await chmod(d, 0o777);
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const p = this.path(key);
    try {
      const st = await stat(p);
      if (!st.isFile()) return undefined;
      return { body: Bun.file(p).stream(), size: st.size };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    const p = this.path(prefix);
    let n = 0;
    const count = async (d: string): Promise<void> => {
      for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
        if (e.isDirectory()) await count(join(d, e.name));
        else n++;
      }
    };
    await count(p);
    await rm(p, { recursive: true, force: true });
    return n;
  }
}
