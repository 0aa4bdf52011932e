import { describe, expect, test } from "bun:test";
import { MAX_LINE, Splitter, splitLines } from "./log-lines.ts";

describe("log lines", () => {
  test("splitLines", () => {
    expect(splitLines("")).toEqual([]);
    expect(splitLines("a\nb\n")).toEqual(["a", "b"]);
    expect(splitLines("a\r\n\nb")).toEqual(["a", "", "b"]);
    const long = splitLines("x".repeat(MAX_LINE + 5))[0]!;
    expect(long.startsWith("x".repeat(MAX_LINE))).toBe(true);
    expect(long.endsWith("[... 5 characters cut]")).toBe(true);
  });

  test("Splitter keeps the unfinished line", () => {
    const s = new Splitter();
    expect(s.push("ab")).toEqual([]);
    expect(s.push("c\nd")).toEqual(["abc"]);
    expect(s.push("\ne\n")).toEqual(["d", "e"]);
    expect(s.push("tail")).toEqual([]);
    expect(s.flush()).toEqual(["tail"]);
  });
});
