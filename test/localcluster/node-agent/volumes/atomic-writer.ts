/**
 * kubelet's AtomicWriter layout for configMap/secret/downwardAPI/projected volumes: files live in
 * a timestamped `..<ts>` directory, `..data` links to it, and each top-level name links through
 * `..data`. An update writes a new directory and renames a fresh link over `..data`, so a reader
 * inside the container sees either the old or the new set of files, never a mix. Because the
 * volume directory itself stays, a bind mount of it sees updates (token rotation) at once.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, normalize } from "node:path";

export interface FileProjection {
  data: Buffer;
  mode: number;
}

export type Payload = Map<string, FileProjection>;

export class PayloadError extends Error {
  override name = "PayloadError";
}

function checkPath(p: string): void {
  const n = normalize(p);
  // No absolute paths, no "..", and no leading ".." names, which the writer's own entries use.
  if (!p || p.startsWith("/") || n.startsWith("..") || p.split("/").includes("..")) {
    throw new PayloadError(`invalid volume file path "${p}"`);
  }
}

function samePayload(dataDir: string, payload: Payload): boolean {
  const listed: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(join(d, e.name), r);
      else listed.push(r);
    }
  };
  walk(dataDir, "");
  if (listed.length !== payload.size) return false;
  for (const [p, f] of payload) {
    const file = join(dataDir, p);
    if (!existsSync(file)) return false;
    if ((statSync(file).mode & 0o777) !== f.mode) return false;
    if (!readFileSync(file).equals(f.data)) return false;
  }
  return true;
}

/** Writes `payload` into `dir`; returns false when nothing changed. */
export function writeAtomically(dir: string, payload: Payload): boolean {
  for (const p of payload.keys()) checkPath(p);
  mkdirSync(dir, { recursive: true });
  const dataLink = join(dir, "..data");
  const oldTarget = existsSync(dataLink) ? readlinkSync(dataLink) : undefined;
  if (oldTarget && samePayload(join(dir, oldTarget), payload)) return false;

  const tsDir = `..${new Date().toISOString().replace(/[:.]/g, "_")}.${process.hrtime.bigint() % 1_000_000n}`;
  for (const [p, f] of payload) {
    const file = join(dir, tsDir, p);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, f.data);
    chmodSync(file, f.mode);
  }
  mkdirSync(join(dir, tsDir), { recursive: true });
  const tmpLink = join(dir, "..data_tmp");
  rmSync(tmpLink, { force: true });
  symlinkSync(tsDir, tmpLink);
  renameSync(tmpLink, dataLink);

  const top = new Set([...payload.keys()].map((p) => p.split("/")[0]!));
  for (const name of top) {
    const link = join(dir, name);
    if (!existsSync(link) && !isLink(link)) symlinkSync(join("..data", name), link);
  }
  for (const name of readdirSync(dir)) {
    if (name.startsWith("..")) {
      if (name !== "..data" && name !== tsDir) rmSync(join(dir, name), { recursive: true, force: true });
    } else if (!top.has(name)) {
      rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
  return true;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
