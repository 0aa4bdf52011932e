/**
 * Unpacks an archive artifact (the gzip'd ustar tar-gz.ts writes) into a directory runtimed just
 * made, streaming: one read chunk at a time, nothing staged but the files themselves. Only what
 * tar-gz.ts can produce is accepted — regular files and directories with relative paths and no
 * `.`/`..` segments; links, devices, pax headers, absolute or escaping paths, a bad header
 * checksum, a duplicate entry, a truncated archive or more than the limits fail the whole unpack
 * (the caller removes the directory). Files are created with O_EXCL (never through an existing
 * name) and given modes 0666 / 0777 (executable) and directories 0777, umask aside: the runtime
 * container may run as another user than runtimed and must be able to change what it is given.
 */

import type { FileHandle } from "node:fs/promises";
import { chmod, mkdir, open } from "node:fs/promises";
import { dirname, join } from "node:path";

const BLOCK = 512;

export class ArchiveInvalid extends Error {
  override name = "ArchiveInvalid";
}

export interface UntarLimits {
  /** Sum of the files' sizes. */
  maxBytes: number;
  maxEntries: number;
}

export interface Unpacked {
  files: number;
  dirs: number;
  bytes: number;
}

const dec = new TextDecoder();

function field(h: Uint8Array, offset: number, len: number): string {
  const raw = h.subarray(offset, offset + len);
  const end = raw.indexOf(0);
  return dec.decode(end === -1 ? raw : raw.subarray(0, end));
}

function octal(h: Uint8Array, offset: number, len: number, what: string): number {
  if ((h[offset] ?? 0) & 0x80) throw new ArchiveInvalid(`${what}: base-256 numbers are not supported`);
  const s = field(h, offset, len).trim();
  if (s === "") return 0;
  if (!/^[0-7]+$/.test(s)) throw new ArchiveInvalid(`${what}: not an octal number: ${JSON.stringify(s)}`);
  return Number.parseInt(s, 8);
}

/** A safe relative path from an entry name, or an ArchiveInvalid. */
export function entryPath(name: string): string {
  const rel = name.replace(/\/+$/, "");
  const parts = rel.split("/");
  if (
    rel === "" ||
    rel.startsWith("/") ||
    rel.includes("\0") ||
    rel.includes("\\") ||
    parts.some((p) => p === "" || p === "." || p === "..")
  )
    throw new ArchiveInvalid(`entry ${JSON.stringify(name)} is not a plain relative path`);
  return rel;
}

export type Header =
  | { kind: "file"; path: string; size: number; exec: boolean }
  | { kind: "dir"; path: string }
  | { kind: "end" };

/** One 512-byte header block. */
export function parseHeader(h: Uint8Array): Header {
  if (h.every((b) => b === 0)) return { kind: "end" };
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] as number);
  const recorded = octal(h, 148, 8, "header checksum");
  if (recorded !== sum)
    throw new ArchiveInvalid("a header's checksum does not match: the archive is corrupt");
  const name = field(h, 0, 100);
  const prefix = field(h, 257, 6).startsWith("ustar") ? field(h, 345, 155) : "";
  const full = prefix ? `${prefix}/${name}` : name;
  const type = String.fromCharCode(h[156] as number);
  const path = entryPath(full);
  if (type === "5") return { kind: "dir", path };
  if (type !== "0" && type !== "\0")
    throw new ArchiveInvalid(
      `entry ${JSON.stringify(full)} is of tar type ${JSON.stringify(type)}; only files and directories are unpacked`,
    );
  const mode = octal(h, 100, 8, `${full} mode`);
  return { kind: "file", path, size: octal(h, 124, 12, `${full} size`), exec: (mode & 0o111) !== 0 };
}

async function makeDirs(root: string, rel: string, made: Set<string>): Promise<number> {
  if (rel === "." || made.has(rel)) return 0;
  const n = await makeDirs(root, dirname(rel), made);
  try {
    await mkdir(join(root, rel));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    throw new ArchiveInvalid(`entry ${JSON.stringify(rel)} is listed twice or over a file`);
  }
  await chmod(join(root, rel), 0o777);
  made.add(rel);
  return n + 1;
}

/** Unpacks `tar` (already gunzip'd bytes) into the existing, empty directory `dest`. */
export async function untar(
  tar: AsyncIterable<Uint8Array>,
  dest: string,
  limits: UntarLimits,
): Promise<Unpacked> {
  const made = new Set<string>();
  const out: Unpacked = { files: 0, dirs: 0, bytes: 0 };
  const header = new Uint8Array(BLOCK);
  let have = 0;
  let file: FileHandle | undefined;
  let left = 0;
  let skip = 0;
  let ended = false;
  const entry = async (h: Header) => {
    if (h.kind === "end") {
      ended = true;
      return;
    }
    if (out.files + out.dirs >= limits.maxEntries)
      throw new ArchiveInvalid(`the archive has more than ${limits.maxEntries} entries`);
    if (h.kind === "dir") {
      out.dirs += await makeDirs(dest, h.path, made);
      return;
    }
    out.bytes += h.size;
    if (out.bytes > limits.maxBytes)
      throw new ArchiveInvalid(`the archive unpacks to more than ${limits.maxBytes} bytes`);
    out.dirs += await makeDirs(dest, dirname(h.path), made);
    const mode = h.exec ? 0o777 : 0o666;
    try {
      file = await open(join(dest, h.path), "wx", mode);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST")
        throw new ArchiveInvalid(`entry ${JSON.stringify(h.path)} is listed twice`);
      throw e;
    }
    await file.chmod(mode);
    out.files++;
    left = h.size;
    skip = (BLOCK - (h.size % BLOCK)) % BLOCK;
    if (left === 0) await closeFile();
  };
  const closeFile = async () => {
    await file?.close();
    file = undefined;
  };
  try {
    for await (const chunk of tar) {
      let pos = 0;
      while (pos < chunk.length && !ended) {
        if (left > 0) {
          const n = Math.min(left, chunk.length - pos);
          await (file as FileHandle).write(chunk.subarray(pos, pos + n));
          pos += n;
          left -= n;
          if (left === 0) await closeFile();
        } else if (skip > 0) {
          const n = Math.min(skip, chunk.length - pos);
          pos += n;
          skip -= n;
        } else {
          const n = Math.min(BLOCK - have, chunk.length - pos);
          header.set(chunk.subarray(pos, pos + n), have);
          have += n;
          pos += n;
          if (have === BLOCK) {
            have = 0;
            await entry(parseHeader(header));
          }
        }
      }
      // What follows the end-of-archive block is padding: read on so the digest covers every byte.
    }
    if (!ended) throw new ArchiveInvalid("the archive ends early (truncated)");
    return out;
  } finally {
    await closeFile().catch(() => undefined);
  }
}
