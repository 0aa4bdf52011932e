import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeDir } from "./make-dir.ts";

describe("makeDir", () => {
  test("creates missing levels, accepts existing ones, refuses a file in the way", () => {
    const root = mkdtempSync(join(tmpdir(), "krt-mkdir-"));
    makeDir(join(root, "a/b/c"));
    expect(statSync(join(root, "a/b/c")).isDirectory()).toBe(true);
    makeDir(join(root, "a/b/c"));
    makeDir(join(root, "a/b/d"));
    expect(statSync(join(root, "a/b/d")).isDirectory()).toBe(true);
    writeFileSync(join(root, "file"), "");
    expect(() => makeDir(join(root, "file/x"))).toThrow(/ENOTDIR/);
    rmSync(root, { recursive: true, force: true });
  });
});
