/**
 * The image map: what "pulling and running image X" means on this host. Each entry plays the role
 * of an image config (Entrypoint, Cmd, Env, WorkingDir); there is no image filesystem.
 * Matching: both the map key and the pod's image are normalized like Docker references (see
 * image-ref.ts). A key with a tag matches only that tag; a key without one matches any tag or
 * digest; a tagged key wins over an untagged one.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { parse } from "yaml";
import { parseImageRef } from "./image-ref.ts";

export interface ImageEntry {
  entrypoint?: string[];
  cmd?: string[];
  env?: Record<string, string>;
  workingDir?: string;
}

export interface ResolvedImage {
  /** The map key that matched. */
  key: string;
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  /** Absolute; relative entries resolve against repoRoot, absent ones are repoRoot. */
  workingDir: string;
  /** `krtlocal://<key>@sha256:<hash of the entry>`: changes when the mapping changes. */
  imageID: string;
}

export class ImageMapError extends Error {
  override name = "ImageMapError";
}

interface Compiled {
  key: string;
  repository: string;
  tag?: string;
  entry: ImageEntry;
}

function stringList(v: unknown, where: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== "string"))
    throw new ImageMapError(`${where} must be a list of strings`);
  return v as string[];
}

export class ImageMap {
  private readonly entries: Compiled[] = [];

  constructor(
    readonly file: string,
    readonly repoRoot: string,
    doc: unknown,
  ) {
    const images = (doc as { images?: unknown } | null)?.images;
    if (!images || typeof images !== "object" || Array.isArray(images)) {
      throw new ImageMapError(`${file}: expected a top-level "images:" mapping of image → entry`);
    }
    for (const [key, raw] of Object.entries(images as Record<string, unknown>)) {
      const r = (raw ?? {}) as Record<string, unknown>;
      const where = `${file}: images["${key}"]`;
      const env = r.env as Record<string, unknown> | undefined;
      if (
        env !== undefined &&
        (typeof env !== "object" || Object.values(env).some((v) => typeof v !== "string"))
      ) {
        throw new ImageMapError(`${where}.env must map names to strings`);
      }
      const entry: ImageEntry = {
        entrypoint: stringList(r.entrypoint, `${where}.entrypoint`),
        cmd: stringList(r.cmd, `${where}.cmd`),
        env: env as Record<string, string> | undefined,
        workingDir: typeof r.workingDir === "string" ? r.workingDir : undefined,
      };
      const ref = parseImageRef(key);
      this.entries.push({ key, repository: ref.repository, tag: ref.tag, entry });
    }
  }

  static load(file: string, repoRoot: string): ImageMap {
    if (!existsSync(file)) throw new ImageMapError(`image map ${file} does not exist`);
    return new ImageMap(file, repoRoot, parse(readFileSync(file, "utf8")));
  }

  /** The entry for `image`, or undefined when the map does not know it. */
  resolve(image: string): ResolvedImage | undefined {
    const ref = parseImageRef(image);
    const candidates = this.entries.filter((e) => e.repository === ref.repository);
    const hit =
      candidates.find((e) => e.tag !== undefined && e.tag === ref.tag) ?? candidates.find((e) => !e.tag);
    if (!hit) return undefined;
    const e = hit.entry;
    const hash = createHash("sha256").update(JSON.stringify(e)).digest("hex");
    return {
      key: hit.key,
      entrypoint: (e.entrypoint ?? []).map((a) => this.repoFile(a)),
      cmd: (e.cmd ?? []).map((a) => this.repoFile(a)),
      env: { ...e.env },
      workingDir: e.workingDir
        ? isAbsolute(e.workingDir)
          ? e.workingDir
          : join(this.repoRoot, e.workingDir)
        : this.repoRoot,
      imageID: `krtlocal://${hit.key}@sha256:${hash}`,
    };
  }

  /**
   * Relative paths of files that exist in the repository become absolute, so a pod that sets its
   * own workingDir still finds `test/localcluster/images/http-server.ts`.
   */
  private repoFile(arg: string): string {
    if (isAbsolute(arg) || !arg.includes("/") || arg.startsWith("-")) return arg;
    const p = join(this.repoRoot, arg);
    return existsSync(p) ? p : arg;
  }
}
