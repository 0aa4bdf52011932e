/**
 * runtimed's artifact path against real stores — the S3-compatible test server (a real process,
 * S3 protocol with multipart) and a real directory as the filesystem store — with one shared
 * suite run against each: collect → upload → download with size and digest, deterministic
 * archives, the rejection rules, a store outage during an upload followed by recovery, a
 * permanent failure, and deleting a Run's prefix. Needs no cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArtifactRejection, collect } from "../../runtimed/artifacts/collect.ts";
import { FilesystemStore } from "../../runtimed/artifacts/fs-store.ts";
import { S3Store } from "../../runtimed/artifacts/s3-store.ts";
import type { ArtifactStoreDriver } from "../../runtimed/artifacts/store.ts";
import { runPrefix } from "../../runtimed/artifacts/store.ts";
import { UploadFailed, uploadAll } from "../../runtimed/artifacts/uploader.ts";
import { type S3Server, startS3Server } from "../localcluster/s3-server.ts";
import { sha256Digest } from "../support/artifacts.ts";

const LIMITS = { maxCount: 32, maxArtifactBytes: 64 * 1024 * 1024, maxTotalBytes: 128 * 1024 * 1024 };
let s3: S3Server;
let fsRoot: string;
let work: string;

beforeAll(async () => {
  s3 = await startS3Server({ buckets: ["krt"] });
  fsRoot = mkdtempSync(join(tmpdir(), "krt-fsstore-"));
  work = mkdtempSync(join(tmpdir(), "krt-artifacts-"));
}, 180_000);
afterAll(async () => {
  await s3?.close();
  rmSync(fsRoot, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

function s3Store(accessKeyId = s3.accessKeyId): S3Store {
  return new S3Store({
    bucket: "krt",
    prefix: "runs",
    endpoint: s3.endpoint,
    pathStyle: true,
    region: s3.region,
    accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    partSize: 5 * 1024 * 1024,
  });
}

function dir(name: string): string {
  const d = join(work, name);
  mkdirSync(d, { recursive: true });
  return d;
}

async function bytesOf(store: ArtifactStoreDriver, location: string): Promise<Uint8Array> {
  const o = await store.get(store.keyOf(location) as string);
  if (!o) throw new Error(`${location} is missing`);
  return new Uint8Array(await new Response(o.body).arrayBuffer());
}

const opts = (runUID: string, attempt = 1) => ({
  namespace: "ns1",
  runUID,
  attempt,
  maxArtifactBytes: LIMITS.maxArtifactBytes,
  retryBudgetMs: 20_000,
  retryDelayMs: 100,
});

const drivers: [string, () => ArtifactStoreDriver][] = [
  ["s3", () => s3Store()],
  ["filesystem", () => new FilesystemStore(fsRoot)],
];

describe.each(drivers)("%s store", (driverName, make) => {
  test("files as-is and directories as a deterministic tar.gz, with size and digest", async () => {
    const store = make();
    const a = dir(`${driverName}-a`);
    writeFileSync(join(a, "report.txt"), "hello artifacts\n");
    const big = new Uint8Array(12 * 1024 * 1024).map((_, i) => (i * 31) & 0xff);
    writeFileSync(join(a, "big.bin"), big);
    mkdirSync(join(a, "out/deep"), { recursive: true });
    writeFileSync(join(a, "out/one.json"), '{"x":1}');
    writeFileSync(join(a, "out/deep/two.txt"), "two");
    const refs = await uploadAll(store, await collect(a, LIMITS), opts("uid-a"));
    expect(refs.map((r) => [r.name, r.type, r.driver])).toEqual([
      ["big.bin", "file", driverName],
      ["out", "archive", driverName],
      ["report.txt", "file", driverName],
    ]);
    const report = refs[2]!;
    expect(report.size).toBe(16);
    expect(report.digest).toBe(sha256Digest("hello artifacts\n"));
    expect(report.contentType).toBe("text/plain");
    expect(await bytesOf(store, report.location)).toEqual(new TextEncoder().encode("hello artifacts\n"));
    expect(refs[0]!.digest).toBe(sha256Digest(big));
    expect(sha256Digest(await bytesOf(store, refs[0]!.location))).toBe(refs[0]!.digest as string);
    const tgz = await bytesOf(store, refs[1]!.location);
    expect(sha256Digest(tgz)).toBe(refs[1]!.digest as string);
    // The archive unpacks with the system tar to exactly the tree.
    const unpack = dir(`${driverName}-unpack`);
    writeFileSync(join(unpack, "x.tgz"), tgz);
    const tar = Bun.spawnSync(["tar", "-tzvf", join(unpack, "x.tgz")]);
    expect(tar.exitCode).toBe(0);
    const listing = tar.stdout.toString();
    expect(listing).toContain("deep/two.txt");
    expect(listing).toContain("one.json");
    // Deterministic: the same tree again (other mtimes) gives the same digest.
    writeFileSync(join(a, "out/deep/two.txt"), "two");
    const later = new Date(Date.now() + 3_600_000);
    for (const f of ["out/deep/two.txt", "out/one.json", "out/deep", "out"])
      utimesSync(join(a, f), later, later);
    const again = await uploadAll(store, await collect(a, LIMITS), opts("uid-a", 2));
    expect(again[1]!.digest).toBe(refs[1]!.digest as string);
    expect(again[1]!.location).not.toBe(refs[1]!.location);
  }, 60_000);

  test("deleting a Run's prefix removes every attempt's objects", async () => {
    const store = make();
    const d = dir(`${driverName}-del`);
    writeFileSync(join(d, "x.txt"), "x");
    const r1 = await uploadAll(store, await collect(d, LIMITS), opts("uid-del", 1));
    await uploadAll(store, await collect(d, LIMITS), opts("uid-del", 2));
    const keep = await uploadAll(store, await collect(d, LIMITS), opts("uid-keep", 1));
    expect(await store.deletePrefix(runPrefix("ns1", "uid-del"))).toBe(2);
    expect(await store.get(store.keyOf(r1[0]!.location) as string)).toBeUndefined();
    expect(await store.get(store.keyOf(keep[0]!.location) as string)).toBeDefined();
  });
});

describe("rejections", () => {
  test("symlinks, special files, bad names and limits reject the whole set with what to change", async () => {
    const d = dir("rej");
    writeFileSync(join(d, "ok.txt"), "fine");
    symlinkSync("/etc/passwd", join(d, "link"));
    mkdirSync(join(d, "tree"));
    symlinkSync("../../..", join(d, "tree/escape"));
    writeFileSync(join(d, "bad name"), "x");
    Bun.spawnSync(["mkfifo", join(d, "pipe")]);
    const err = await collect(d, LIMITS).catch((e) => e);
    expect(err).toBeInstanceOf(ArtifactRejection);
    expect(err.message).toContain("link is a symlink");
    expect(err.message).toContain("tree/escape is a symlink");
    expect(err.message).toContain('"bad name"');
    expect(err.message).toContain("pipe is a FIFO");
    expect(err.message).toContain("none stored");
  });

  test("count, per-artifact and total size limits", async () => {
    const d = dir("lim");
    for (let i = 0; i < 3; i++) writeFileSync(join(d, `f${i}`), "12345");
    await expect(collect(d, { ...LIMITS, maxCount: 2 })).rejects.toThrow("3 entries, at most 2");
    await expect(collect(d, { ...LIMITS, maxArtifactBytes: 4 })).rejects.toThrow("maxArtifactBytes 4");
    await expect(collect(d, { ...LIMITS, maxTotalBytes: 10 })).rejects.toThrow("15 bytes in all");
    expect(await collect(join(work, "missing"), LIMITS)).toEqual([]);
  });
});

describe("s3 failures", () => {
  test("a store outage during an upload is retried and the upload completes after recovery", async () => {
    const d = dir("outage");
    writeFileSync(join(d, "payload.bin"), new Uint8Array(6 * 1024 * 1024).fill(9));
    const planned = await collect(d, LIMITS);
    await s3.stop();
    const retries: string[] = [];
    // A budget no slow restart below can use up: only the outage is under test here.
    const pending = uploadAll(s3Store(), planned, {
      ...opts("uid-outage"),
      retryBudgetMs: 240_000,
      onRetry: (n) => retries.push(n),
    });
    let done = false;
    void pending.then(() => {
      done = true;
    });
    // The store stays down until the upload has failed and been retried at least twice.
    const deadline = Date.now() + 60_000;
    while (retries.length < 2 && Date.now() < deadline) await Bun.sleep(20);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    // It could not finish while the store was down.
    expect(done).toBe(false);
    await s3.start();
    const refs = await pending;
    expect(refs[0]!.size).toBe(6 * 1024 * 1024);
    expect(sha256Digest(await bytesOf(s3Store(), refs[0]!.location))).toBe(refs[0]!.digest as string);
  }, 300_000);

  test("wrong credentials fail at once, without retrying", async () => {
    const d = dir("creds");
    writeFileSync(join(d, "a.txt"), "a");
    const retries: string[] = [];
    const err = await uploadAll(s3Store("WRONGKEY"), await collect(d, LIMITS), {
      ...opts("uid-creds"),
      onRetry: (n) => retries.push(n),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(UploadFailed);
    expect(err.message).toContain("a.txt");
    expect(err.message).not.toContain("after retrying");
    expect(retries).toEqual([]);
  });
});
