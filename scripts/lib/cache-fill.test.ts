// Two fills of the same empty cache at once, as two test suites (release and chart-upgrade) or two
// clusters start them on a fresh machine: both succeed and share one complete result.
import { afterAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fillCache } from "../../test/support/cache-fill.ts";
import { runProcess } from "../../test/support/process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const roots: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), "krt-cache-fill-"));
  roots.push(d);
  return d;
};
afterAll(() => {
  for (const d of roots) rmSync(d, { recursive: true, force: true });
});

// A fill that takes a while and counts how often it ran: bash <script> <counter> <dir>.
const SLOW_FILL = `echo run >>"$1"; mkdir -p "$2"; sleep 0.5; echo done >"$2/result"`;

describe("cache_fill", () => {
  test("two concurrent fills run the fill once and both see the result", async () => {
    const root = fresh();
    const dir = join(root, "bin", "tool-1");
    const counter = join(root, "runs");
    const fill = ["bash", "-c", SLOW_FILL, "bash", counter];
    await Promise.all([fillCache(dir, fill), fillCache(dir, fill)]);
    expect(readFileSync(counter, "utf8")).toBe("run\n");
    expect(readFileSync(join(dir, "result"), "utf8")).toBe("done\n");
    expect(existsSync(join(dir, ".complete"))).toBe(true);
    // A later fill reuses it.
    await fillCache(dir, fill);
    expect(readFileSync(counter, "utf8")).toBe("run\n");
  });

  test("a partial directory a killed run left is cleared and filled again", async () => {
    const dir = join(fresh(), "venv", "x");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "stale"), "");
    await fillCache(dir, ["bash", "-c", 'mkdir -p "$1" && touch "$1/fresh"', "bash"]);
    expect(readdirSync(dir).sort()).toEqual([".complete", "fresh"]);
  });

  test("a failed fill reports the command, leaves nothing, and the next one retries", async () => {
    const dir = join(fresh(), "bin", "y");
    const err = await fillCache(dir, [
      "bash",
      "-c",
      'mkdir -p "$1" && touch "$1/half" && exit 3',
      "bash",
    ]).catch((e: Error) => e);
    expect(String(err)).toContain("failed");
    expect(String(err)).toContain(`cache fill of ${dir} failed`);
    expect(existsSync(dir)).toBe(false);
    await fillCache(dir, ["bash", "-c", 'mkdir -p "$1"', "bash"]);
    expect(existsSync(join(dir, ".complete"))).toBe(true);
  });
});

describe("the project's cache fills, twice at once into an empty cache", () => {
  test("the release's Bun target package (npm pack)", async () => {
    const cache = fresh();
    const env = { ...process.env, KRT_CACHE_DIR: cache };
    const one = () =>
      runProcess(["bash", "scripts/lib/bun-package.sh", "linux", "amd64"], { cwd: ROOT, env });
    const [a, b] = await Promise.all([one(), one()]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, "", ""]);
    const dir = a.stdout.trim();
    expect(b.stdout.trim()).toBe(dir);
    expect(dir).toBe(join(cache, "bin", `bun-linux-amd64-${Bun.version}`));
    expect(existsSync(join(dir, ".complete"))).toBe(true);
    const version = await runProcess([join(dir, "bin", "bun"), "--version"]);
    expect(version.stdout.trim()).toBe(Bun.version);
    // No temporary directory or archive left beside or inside it.
    expect(readdirSync(join(cache, "bin")).sort()).toEqual([
      `bun-linux-amd64-${Bun.version}`,
      `bun-linux-amd64-${Bun.version}.lock`,
    ]);
    expect(readdirSync(dir).filter((f) => f.endsWith(".tgz"))).toEqual([]);
  }, 180_000);

  test("a build-binaries.sh tool (the Go code generators)", async () => {
    const cache = fresh();
    // Its own Go build cache too, so the build really runs twice-at-once from nothing.
    const env = { ...process.env, KRT_CACHE_DIR: cache, GOCACHE: join(cache, "go-build") };
    const one = () =>
      runProcess(["bash", "test/localcluster/build/build-binaries.sh", "codegen"], { cwd: ROOT, env });
    const [a, b] = await Promise.all([one(), one()]);
    expect([a.code, b.code]).toEqual([0, 0]);
    // One of the two built; the other waited for it and reused the result.
    const builds = [a.stderr, b.stderr].filter((e) => e.includes(": go build ")).length;
    expect(builds).toBe(1);
    const versions = readFileSync(join(ROOT, "test/localcluster/build/versions.env"), "utf8");
    const v = (k: string) => new RegExp(`^${k}=(\\S+)`, "m").exec(versions)?.[1];
    const dir = join(
      cache,
      "bin",
      `codegen-${v("PROTOC_GEN_GO_VERSION")}-connect-${v("CONNECT_GO_VERSION")}`,
    );
    expect(readdirSync(dir).sort()).toEqual([".complete", "protoc-gen-connect-go", "protoc-gen-go"]);
    const r = await runProcess([join(dir, "protoc-gen-go"), "--version"]);
    expect(r.stdout).toContain(v("PROTOC_GEN_GO_VERSION") ?? "?");
  }, 600_000);
});
