import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gunzipSync, gzipSync } from "node:zlib";
import { type ArtifactInput, type ArtifactRef, Reason, type Run, RunPhase } from "@kruntimes/api";
import { KubeError } from "@kruntimes/kube";
import pino from "pino";
import { Registry } from "prom-client";
import { attemptResult } from "../execution/attempt-result.ts";
import {
  attemptDirectory,
  makeDirsBelow,
  removeAttemptDirectory,
  UnsafePath,
} from "../workspaces/run-directory.ts";
import { createArtifactMetrics } from "./artifact-metrics.ts";
import { collect } from "./collect.ts";
import { FilesystemStore } from "./fs-store.ts";
import { resolveInput } from "./input-source.ts";
import { InputStager, InputUnavailable, StagingAborted } from "./stage-inputs.ts";
import type { ArtifactStoreDriver } from "./store.ts";
import { tarGzStream, tarHeader } from "./tar-gz.ts";
import { ArchiveInvalid, entryPath, untar } from "./untar.ts";
import { uploadAll } from "./uploader.ts";

const roots: string[] = [];
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `krt-inputs-${prefix}-`));
  roots.push(d);
  return d;
}
afterAll(() => {
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

const log = pino({ level: "silent" });
const LIMITS = { maxBytes: 1 << 20, maxEntries: 100 };

async function bytesOf(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of it) parts.push(c);
  return Buffer.concat(parts);
}

/** A tar (not gzip'd) from raw headers and bodies, ended by two zero blocks. */
function tarOf(...entries: { header: Uint8Array; body?: string }[]): Buffer {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    parts.push(e.header);
    if (e.body) {
      const b = Buffer.from(e.body);
      parts.push(b, new Uint8Array((512 - (b.length % 512)) % 512));
    }
  }
  parts.push(new Uint8Array(1024));
  return Buffer.concat(parts);
}

/** A header with a chosen name and type flag (checksum recomputed). */
function rawHeader(name: string, type: string, size = 0): Uint8Array {
  const h = tarHeader({ rel: "x", kind: "file", size, exec: false });
  h.fill(0, 0, 100);
  h.set(Buffer.from(name), 0);
  h[156] = type.charCodeAt(0);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.set(Buffer.from(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
  return h;
}

describe("untar", () => {
  test("a directory archived by tar-gz.ts unpacks to the same tree, files 0666/0777, dirs 0777", async () => {
    const src = tmp("src");
    mkdirSync(join(src, "d/sub"), { recursive: true });
    writeFileSync(join(src, "d/a.txt"), "alpha\n");
    writeFileSync(join(src, "d/sub/run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(src, "d/sub/run.sh"), 0o755);
    writeFileSync(join(src, "d/empty"), "");
    const [planned] = await collect(src, { maxCount: 8, maxArtifactBytes: 1 << 20, maxTotalBytes: 1 << 20 });
    if (planned?.kind !== "dir") throw new Error("expected a directory");
    const tar = gunzipSync(await bytesOf(tarGzStream(planned.path, planned.entries)));
    const dest = tmp("dest");
    const got = await untar(Readable.from([tar.subarray(0, 700), tar.subarray(700)]), dest, LIMITS);
    expect(got).toEqual({ files: 3, dirs: 1, bytes: 6 + 18 });
    expect(readFileSync(join(dest, "a.txt"), "utf8")).toBe("alpha\n");
    expect(readFileSync(join(dest, "sub/run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect(statSync(join(dest, "sub/run.sh")).mode & 0o777).toBe(0o777);
    expect(statSync(join(dest, "a.txt")).mode & 0o777).toBe(0o666);
    expect(statSync(join(dest, "sub")).mode & 0o777).toBe(0o777);
    expect(statSync(join(dest, "empty")).size).toBe(0);
  });

  test("entry paths: plain relative ones only", () => {
    expect(entryPath("a/b/c")).toBe("a/b/c");
    expect(entryPath("dir/")).toBe("dir");
    for (const bad of ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", "", "a\\b"])
      expect(() => entryPath(bad)).toThrow(ArchiveInvalid);
  });

  test("links, escaping paths, a bad checksum, duplicates, truncation and the limits are refused", async () => {
    const cases: [string, Buffer, string][] = [
      ["symlink", tarOf({ header: rawHeader("evil", "2") }), 'of tar type "2"'],
      ["hard link", tarOf({ header: rawHeader("evil", "1") }), 'of tar type "1"'],
      ["pax header", tarOf({ header: rawHeader("pax", "x") }), 'of tar type "x"'],
      ["dot-dot", tarOf({ header: rawHeader("../up", "0", 1), body: "x" }), "not a plain relative path"],
      ["absolute", tarOf({ header: rawHeader("/abs", "0", 1), body: "x" }), "not a plain relative path"],
      [
        "duplicate",
        tarOf({ header: rawHeader("f", "0", 1), body: "x" }, { header: rawHeader("f", "0", 1), body: "y" }),
        "listed twice",
      ],
      [
        "file over a file's path",
        tarOf({ header: rawHeader("f", "0", 1), body: "x" }, { header: rawHeader("f/g", "0", 1), body: "y" }),
        "listed twice or over a file",
      ],
      ["truncated", tarOf({ header: rawHeader("f", "0", 1), body: "x" }).subarray(0, 512), "ends early"],
      ["too big", tarOf({ header: rawHeader("f", "0", 2 << 20) }), "more than 1048576 bytes"],
    ];
    const corrupt = tarOf({ header: rawHeader("f", "0", 1), body: "x" });
    corrupt[0] = "g".charCodeAt(0);
    cases.push(["checksum", corrupt, "checksum does not match"]);
    for (const [what, tar, message] of cases) {
      const dest = tmp("bad");
      const err = await untar(Readable.from([tar]), dest, LIMITS).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(ArchiveInvalid);
      expect((err as Error).message, what).toContain(message);
      expect(
        readdirSync(dest).filter((n) => n === "evil" || n === "up"),
        what,
      ).toEqual([]);
    }
    const many = tarOf(...Array.from({ length: 3 }, (_, i) => ({ header: rawHeader(`f${i}`, "0") })));
    await expect(untar(Readable.from([many]), tmp("many"), { ...LIMITS, maxEntries: 2 })).rejects.toThrow(
      "more than 2 entries",
    );
  });
});

describe("working directories", () => {
  test("the attempt's directory mirrors the Runtime Server's working_dir rule", () => {
    expect(attemptDirectory("/workspace", "", "uid-1", 2)).toEqual({
      root: "/workspace/runs",
      rel: "uid-1/2",
    });
    expect(attemptDirectory("/workspace", "workspaces/ws-abcd1234", "uid-1", 2)).toEqual({
      root: "/workspace/runs",
      rel: "workspaces/ws-abcd1234",
    });
  });

  test("makeDirsBelow makes 0777 directories and never goes through a link", async () => {
    const root = tmp("dirs");
    const made = await makeDirsBelow(join(root, "runs"), "a/b");
    expect(statSync(made).mode & 0o777).toBe(0o777);
    expect(statSync(join(root, "runs")).mode & 0o777).toBe(0o777);
    const attempt = { root: join(root, "runs"), rel: "uid/1" };
    writeFileSync(join(await makeDirsBelow(attempt.root, attempt.rel), "staged"), "x");
    await makeDirsBelow(attempt.root, "uid/2");
    await removeAttemptDirectory(attempt);
    expect(readdirSync(join(root, "runs/uid"))).toEqual(["2"]); // another attempt's stays
    await removeAttemptDirectory({ ...attempt, rel: "uid/2" });
    expect(readdirSync(join(root, "runs")).sort()).toEqual(["a"]);
    symlinkSync(tmp("elsewhere"), join(made, "link"));
    await expect(makeDirsBelow(join(root, "runs"), "a/b/link/c")).rejects.toBeInstanceOf(UnsafePath);
    writeFileSync(join(made, "file"), "");
    await expect(makeDirsBelow(join(root, "runs"), "a/b/file/c")).rejects.toThrow("is not a directory");
  });
});

const NS = "team";
function sourceRun(refs: ArtifactRef[], phase: RunPhase = RunPhase.Succeeded, uid = "src-uid"): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "build", namespace: NS, uid },
    spec: { runtime: "bash", mode: { task: {} } },
    status: { phase, artifactRefs: refs },
  } as Run;
}

describe("resolveInput", () => {
  const store = new FilesystemStore("/nowhere");
  const ref = (over: Partial<ArtifactRef> = {}): ArtifactRef => ({
    name: "out",
    driver: "filesystem",
    type: "file",
    location: `${NS}/src-uid/1/out`,
    attempt: 1,
    ...over,
  });
  const input: ArtifactInput = { run: "build", name: "out" };

  test("the reference of that name, landing at its name or at path", () => {
    expect(resolveInput(sourceRun([ref()]), input, store)).toEqual({
      ref: ref(),
      key: `${NS}/src-uid/1/out`,
      dest: "out",
    });
    expect(resolveInput(sourceRun([ref()]), { ...input, path: "in/x.txt" }, store)).toMatchObject({
      dest: "in/x.txt",
    });
  });

  test("no such artifact: names what the Run has, or says it has not finished", () => {
    expect(resolveInput(sourceRun([ref({ name: "logs" })]), input, store)).toEqual({
      error:
        "run build has no artifact out (it has logs); check the artifact's name (the entry's name in that Run's $KRUNTIME_ARTIFACTS_DIR)",
    });
    const running = resolveInput(sourceRun([], RunPhase.Running), input, store);
    expect("error" in running && running.error).toContain(
      "it has none); it is still Running: its artifacts are recorded when its attempt ends",
    );
  });

  test("another store, or another Run's prefix, is refused", () => {
    const s3 = resolveInput(sourceRun([ref({ driver: "s3", location: "s3://b/x" })]), input, store);
    expect("error" in s3 && s3.error).toContain("is in another store (s3://b/x) than this Runtime's");
    const other = resolveInput(sourceRun([ref({ location: `${NS}/other-uid/1/out` })]), input, store);
    expect("error" in other && other.error).toContain("points outside run build's own objects");
    const otherNs = resolveInput(sourceRun([ref({ location: `elsewhere/src-uid/1/out` })]), input, store);
    expect("error" in otherNs).toBe(true);
  });
});

describe("InputStager (filesystem store)", () => {
  const storeRoot = tmp("store");
  const store = new FilesystemStore(storeRoot);
  const registry = new Registry();
  const metrics = createArtifactMetrics(registry);

  /** Uploads what `files` describe as Run src-uid's attempt 1 and returns the Run with its refs. */
  async function stored(files: Record<string, string>): Promise<Run> {
    const dir = tmp("produce");
    for (const [p, content] of Object.entries(files)) {
      mkdirSync(join(dir, p, ".."), { recursive: true });
      writeFileSync(join(dir, p), content);
    }
    const planned = await collect(dir, { maxCount: 8, maxArtifactBytes: 1 << 20, maxTotalBytes: 1 << 20 });
    const refs = await uploadAll(store, planned, {
      namespace: NS,
      runUID: "src-uid",
      attempt: 1,
      maxArtifactBytes: 1 << 20,
      retryBudgetMs: 0,
      retryDelayMs: 1,
    });
    return sourceRun(refs);
  }

  function stager(source: Run | undefined, s: ArtifactStoreDriver = store, budgetMs = 0) {
    const client = {
      get: async <T>(p: string): Promise<T> => {
        if (!source) throw new KubeError("GET", p, 404, { message: "not found" });
        return source as T;
      },
    };
    return new InputStager({
      store: s,
      client: client as never,
      metrics,
      log,
      retryBudgetMs: budgetMs,
      retryDelayMs: 5,
      maxUnpackedBytes: 1 << 20,
      maxUnpackedEntries: 100,
    });
  }
  const consumer = (inputs: ArtifactInput[]): Run =>
    ({
      metadata: { name: "use", namespace: NS, uid: "use-uid" },
      spec: { runtime: "bash", mode: { task: {} }, artifactInputs: inputs },
    }) as Run;
  const signal = new AbortController().signal;
  const at = (wd: string) => ({ root: wd, rel: "" });

  test("a file and a directory land at their names or paths, verified, replacing what was there", async () => {
    const src = await stored({
      "report.txt": "ok\n",
      "site/index.html": "<p>hi</p>",
      "site/css/a.css": "p{}",
    });
    // The working directory and its parents do not exist yet (the Runtime Server makes it later).
    const root = join(tmp("wd"), "runs");
    const wd = join(root, "use-uid/1");
    const staged = await stager(src).stage(
      consumer([
        { run: "build", name: "report.txt" },
        { run: "build", name: "site", path: "in/web" },
        { run: "build", name: "report.txt", path: "in/copy.txt" },
      ]),
      { root, rel: "use-uid/1" },
      signal,
      log,
    );
    expect(staged.artifacts).toBe(3);
    expect(staged.bytes).toBeGreaterThan(6);
    expect(readFileSync(join(wd, "report.txt"), "utf8")).toBe("ok\n");
    expect(readFileSync(join(wd, "in/copy.txt"), "utf8")).toBe("ok\n");
    expect(readdirSync(join(wd, "in/web")).sort()).toEqual(["css", "index.html"]);
    expect(readFileSync(join(wd, "in/web/css/a.css"), "utf8")).toBe("p{}");
    expect(statSync(join(wd, "in/web")).mode & 0o777).toBe(0o777);
    expect(statSync(join(wd, "report.txt")).mode & 0o777).toBe(0o666);
    expect(readdirSync(join(wd, "in")).sort()).toEqual(["copy.txt", "web"]); // no temporaries left
    expect(statSync(join(root, "use-uid")).mode & 0o777).toBe(0o777);
    // Staged again over an earlier copy that has more in it: replaced whole, not merged.
    writeFileSync(join(wd, "in/web/stale.txt"), "old");
    await stager(src).stage(
      consumer([{ run: "build", name: "site", path: "in/web" }]),
      { root, rel: "use-uid/1" },
      signal,
      log,
    );
    expect(readdirSync(join(wd, "in/web")).sort()).toEqual(["css", "index.html"]);
    expect(await registry.getSingleMetricAsString("kruntimes_runtimed_artifact_input_seconds")).toContain(
      'kruntimes_runtimed_artifact_input_seconds_count{result="ok"} 2',
    );
  });

  test("a tampered object, a missing one, a missing Run and a link in the way fail with what to check", async () => {
    const src = await stored({ "data.bin": "original" });
    const ref = src.status?.artifactRefs?.[0] as ArtifactRef;
    writeFileSync(join(storeRoot, ref.location), "tampered");
    const run = consumer([{ run: "build", name: "data.bin" }]);
    const wd = tmp("wd2");
    const err = await stager(src)
      .stage(run, at(wd), signal, log)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputUnavailable);
    expect((err as Error).message).toContain("artifact build/data.bin does not match what its Run recorded");
    expect(readdirSync(wd)).toEqual([]);

    rmSync(join(storeRoot, ref.location));
    await expect(stager(src).stage(run, at(wd), signal, log)).rejects.toThrow(
      "artifact build/data.bin is recorded but missing from the store",
    );
    await expect(stager(undefined).stage(run, at(wd), signal, log)).rejects.toThrow(
      `run build (named in spec.artifactInputs) does not exist in namespace ${NS}`,
    );
    const src2 = await stored({ "x.txt": "x" });
    symlinkSync(tmp("target"), join(wd, "in"));
    await expect(
      stager(src2).stage(consumer([{ run: "build", name: "x.txt", path: "in/x.txt" }]), at(wd), signal, log),
    ).rejects.toThrow("is a symbolic link; runtimed does not write through links");
    expect(lstatSync(join(wd, "in")).isSymbolicLink()).toBe(true);
  });

  test("a transient store failure is retried within the budget; past it the input is unavailable", async () => {
    const src = await stored({ "t.txt": "t" });
    let failures = 2;
    const flaky: ArtifactStoreDriver = {
      driver: store.driver,
      location: (k) => store.location(k),
      keyOf: (l) => store.keyOf(l),
      put: (k, c) => store.put(k, c),
      deletePrefix: (p) => store.deletePrefix(p),
      get: async (k) => {
        if (failures-- > 0) throw Object.assign(new Error("503 SlowDown"), { status: 503 });
        return store.get(k);
      },
    };
    const run = consumer([{ run: "build", name: "t.txt" }]);
    const wd = tmp("wd3");
    await stager(src, flaky, 10_000).stage(run, at(wd), signal, log);
    expect(readFileSync(join(wd, "t.txt"), "utf8")).toBe("t");
    failures = 1000;
    await expect(stager(src, flaky, 30).stage(run, at(wd), signal, log)).rejects.toThrow(
      "failed after retrying for 0s: 503 SlowDown; check that the artifact store is reachable",
    );
    const aborted = new AbortController();
    aborted.abort();
    await expect(stager(src, flaky, 10_000).stage(run, at(wd), aborted.signal, log)).rejects.toBeInstanceOf(
      StagingAborted,
    );
  });

  test("the API unavailable: retried; forbidden: not", async () => {
    const src = await stored({ "api.txt": "a" });
    let failures = 1;
    let code = 503;
    const client = {
      get: async <T>(p: string): Promise<T> => {
        if (failures-- > 0) throw new KubeError("GET", p, code, { message: `HTTP ${code}` });
        return src as T;
      },
    };
    const s = new InputStager({
      store,
      client: client as never,
      metrics,
      log,
      retryBudgetMs: 5_000,
      retryDelayMs: 5,
      maxUnpackedBytes: 1 << 20,
      maxUnpackedEntries: 100,
    });
    const wd = tmp("wd5");
    await s.stage(consumer([{ run: "build", name: "api.txt" }]), at(wd), signal, log);
    expect(readFileSync(join(wd, "api.txt"), "utf8")).toBe("a");
    failures = 1;
    code = 403;
    await expect(s.stage(consumer([{ run: "build", name: "api.txt" }]), at(wd), signal, log)).rejects.toThrow(
      "reading run build failed: HTTP 403",
    );
  });

  test("a refused staging ends the attempt Failed with ArtifactInputUnavailable", () => {
    const r = attemptResult({ kind: "refused", reason: Reason.ArtifactInputUnavailable, message: "m" }, 5);
    expect(r.outcome).toEqual({
      phase: RunPhase.Failed,
      reason: Reason.ArtifactInputUnavailable,
      message: "m",
    });
    expect(attemptResult({ kind: "refused", message: "m" }, 5).outcome.reason).toBe(Reason.StartFailed);
  });

  test("a gzip that is not one is reported as such", async () => {
    const run = sourceRun([
      {
        name: "d",
        driver: "filesystem",
        type: "archive",
        location: `${NS}/src-uid/1/d.tar.gz`,
      },
    ]);
    mkdirSync(join(storeRoot, NS, "src-uid/1"), { recursive: true });
    writeFileSync(
      join(storeRoot, NS, "src-uid/1/d.tar.gz"),
      gzipSync(Buffer.from("not a tar")).subarray(0, 12),
    );
    await expect(
      stager(run).stage(consumer([{ run: "build", name: "d" }]), at(tmp("wd4")), signal, log),
    ).rejects.toThrow("artifact build/d is not valid gzip");
  });
});
