/**
 * Lays out what one compiled binary contains as a directory syft can catalog: a `bun build
 * --compile` executable is one file, and no SBOM tool can see the npm packages bundled into it.
 * bun's metafile lists every source file of the bundle; each file belongs to the nearest
 * package.json that names a package, and that package.json is copied to
 * <stage>/node_modules/<name>/package.json. The Bun runtime the binary is made of is staged the
 * same way, from the @oven/bun-<os>-<arch> npm package it came from. The workspace's own
 * packages (@kruntimes/*) are given the release's version: they are released together.
 *
 * Usage: bun scripts/release/stage-sbom.ts <metafile> <bun-package-dir> <stage-dir> <version>
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..", "..");

interface PackageJson {
  name?: string;
  version?: string;
}

const owners = new Map<string, string | undefined>();

/** The directory of the nearest package.json with a name and version, at or above `dir`. */
function ownerOf(dir: string): string | undefined {
  if (owners.has(dir)) return owners.get(dir);
  let found: string | undefined;
  const file = join(dir, "package.json");
  if (existsSync(file)) {
    const pkg = JSON.parse(readFileSync(file, "utf8")) as PackageJson;
    if (pkg.name && pkg.version) found = dir;
  }
  if (!found && dir !== ROOT && dir.startsWith(ROOT)) found = ownerOf(dirname(dir));
  owners.set(dir, found);
  return found;
}

export function bundledPackages(metafile: string): string[] {
  const meta = JSON.parse(readFileSync(metafile, "utf8")) as { inputs: Record<string, unknown> };
  const dirs = new Set<string>();
  for (const input of Object.keys(meta.inputs)) {
    // bun's own modules (bun:, node:) have no file.
    if (/^[a-z]+:/.test(input)) continue;
    const owner = ownerOf(dirname(resolve(ROOT, input)));
    if (!owner) throw new Error(`no package.json with a name and version owns ${input}`);
    dirs.add(owner);
  }
  return [...dirs].sort();
}

function stage(metafile: string, bunPackage: string, out: string, version: string): number {
  const dirs = [...bundledPackages(metafile), resolve(bunPackage)];
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
    const to = join(out, "node_modules", pkg.name as string, "package.json");
    mkdirSync(dirname(to), { recursive: true });
    if (pkg.name?.startsWith("@kruntimes/")) writeFileSync(to, JSON.stringify({ ...pkg, version }, null, 2));
    else copyFileSync(join(dir, "package.json"), to);
  }
  return dirs.length;
}

if (import.meta.main) {
  const [metafile, bunPackage, out, version] = Bun.argv.slice(2);
  if (!metafile || !bunPackage || !out || !version) {
    console.error(
      "usage: bun scripts/release/stage-sbom.ts <metafile> <bun-package-dir> <stage-dir> <version>",
    );
    process.exit(2);
  }
  const n = stage(metafile, bunPackage, out, version);
  console.log(`staged ${n} packages in ${out}`);
}
