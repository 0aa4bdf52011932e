import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeAtomically } from "./atomic-writer.ts";

const f = (s: string, mode = 0o644) => ({ data: Buffer.from(s), mode });

describe("atomic volume writer", () => {
  test("..data layout, modes, unchanged payloads skipped, removed keys disappear", () => {
    const dir = mkdtempSync("/tmp/krt-atomic-");
    expect(
      writeAtomically(
        dir,
        new Map([
          ["a", f("1")],
          ["sub/b", f("2", 0o600)],
        ]),
      ),
    ).toBe(true);
    expect(readFileSync(join(dir, "a"), "utf8")).toBe("1");
    expect(readFileSync(join(dir, "sub/b"), "utf8")).toBe("2");
    expect(lstatSync(join(dir, "a")).isSymbolicLink()).toBe(true);
    expect(statSync(join(dir, "sub/b")).mode & 0o777).toBe(0o600);
    const first = readlinkSync(join(dir, "..data"));

    expect(
      writeAtomically(
        dir,
        new Map([
          ["a", f("1")],
          ["sub/b", f("2", 0o600)],
        ]),
      ),
    ).toBe(false);
    expect(readlinkSync(join(dir, "..data"))).toBe(first);

    expect(writeAtomically(dir, new Map([["a", f("changed")]]))).toBe(true);
    expect(readFileSync(join(dir, "a"), "utf8")).toBe("changed");
    expect(existsSync(join(dir, "sub"))).toBe(false);
    expect(existsSync(join(dir, first))).toBe(false);
  });
  test("paths escaping the volume are refused", () => {
    const dir = mkdtempSync("/tmp/krt-atomic-");
    for (const bad of ["../x", "/abs", "a/../../x", "..data"]) {
      expect(() => writeAtomically(dir, new Map([[bad, f("x")]]))).toThrow(/invalid volume file path/);
    }
  });
});
