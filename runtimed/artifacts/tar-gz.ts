/**
 * A directory as a deterministic tar.gz: POSIX ustar entries in sorted path order, mode 0644 or
 * 0755, uid/gid 0, no user names, mtime 0, then gzip with a zero header time — the same tree
 * always gives the same bytes (and digest), whoever wrote it and when. Streamed: nothing is staged
 * on disk and only one read chunk is held at a time. A file that changes size while being read
 * fails the archive rather than storing something that never existed.
 */
import { open } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import type { DirEntry } from "./collect.ts";

const BLOCK = 512;
const MAX_OCTAL_SIZE = 8 ** 11 - 1;
const enc = new TextEncoder();

function put(h: Uint8Array, offset: number, len: number, s: string): void {
  const b = enc.encode(s);
  if (b.length > len) throw new Error(`tar header field too long: ${s}`);
  h.set(b, offset);
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, "0")}\0`;
}

/** ustar splits paths over 100 bytes into prefix (≤155) + "/" + name (≤100). */
function splitPath(rel: string): [string, string] {
  if (enc.encode(rel).length <= 100) return ["", rel];
  for (let i = rel.indexOf("/"); i !== -1; i = rel.indexOf("/", i + 1)) {
    const prefix = rel.slice(0, i);
    const name = rel.slice(i + 1);
    if (enc.encode(prefix).length <= 155 && enc.encode(name).length <= 100) return [prefix, name];
  }
  throw new Error(`${rel}: path cannot be stored in a tar archive (ustar: name ≤ 100 bytes, prefix ≤ 155)`);
}

export function tarHeader(e: DirEntry): Uint8Array {
  if (e.size > MAX_OCTAL_SIZE) throw new Error(`${e.rel}: files over 8 GiB cannot be archived`);
  const h = new Uint8Array(BLOCK);
  const [prefix, name] = splitPath(e.kind === "dir" ? `${e.rel}/` : e.rel);
  put(h, 0, 100, name);
  put(h, 100, 8, octal(e.kind === "dir" || e.exec ? 0o755 : 0o644, 8));
  put(h, 108, 8, octal(0, 8));
  put(h, 116, 8, octal(0, 8));
  put(h, 124, 12, octal(e.kind === "dir" ? 0 : e.size, 12));
  put(h, 136, 12, octal(0, 12));
  put(h, 148, 8, "        ");
  put(h, 156, 1, e.kind === "dir" ? "5" : "0");
  put(h, 257, 6, "ustar\0");
  put(h, 263, 2, "00");
  put(h, 345, 155, prefix);
  let sum = 0;
  for (const b of h) sum += b;
  put(h, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return h;
}

async function* fileBytes(path: string, size: number, rel: string): AsyncGenerator<Uint8Array> {
  const f = await open(path, "r");
  try {
    let left = size;
    const buf = Buffer.allocUnsafe(256 * 1024);
    while (left > 0) {
      const { bytesRead } = await f.read(buf, 0, Math.min(buf.length, left), null);
      if (bytesRead === 0) throw new Error(`${rel} shrank while it was archived`);
      left -= bytesRead;
      yield new Uint8Array(buf.subarray(0, bytesRead));
    }
    const { bytesRead } = await f.read(buf, 0, 1, null);
    if (bytesRead !== 0) throw new Error(`${rel} grew while it was archived`);
  } finally {
    await f.close();
  }
}

export async function* tarStream(root: string, entries: readonly DirEntry[]): AsyncGenerator<Uint8Array> {
  for (const e of entries) {
    yield tarHeader(e);
    if (e.kind !== "file") continue;
    yield* fileBytes(join(root, e.rel), e.size, e.rel);
    const pad = (BLOCK - (e.size % BLOCK)) % BLOCK;
    if (pad) yield new Uint8Array(pad);
  }
  yield new Uint8Array(BLOCK * 2);
}

/** The gzip'd archive as chunks; each call starts afresh (a retried upload re-reads the tree). */
export function tarGzStream(root: string, entries: readonly DirEntry[]): AsyncIterable<Uint8Array> {
  return Readable.from(tarStream(root, entries)).pipe(createGzip({ level: 6 }));
}

/** A single file's bytes, checked against the size seen when it was collected. */
export function fileStream(path: string, size: number, name: string): AsyncIterable<Uint8Array> {
  return fileBytes(path, size, name);
}
