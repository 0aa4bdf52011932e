/** Page tokens and the sorted-listing helpers: resumption by bytes, refusals, the cache rule. */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, type ConnectError } from "@connectrpc/connect";
import { DirListings, firstAfter } from "./dir-listing.ts";
import { PageTokens } from "./page-token.ts";

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return Code[(error as ConnectError).code];
  }
  return "OK";
};

describe("PageTokens", () => {
  const tokens = new PageTokens(new Uint8Array(32).fill(1));
  const name = Buffer.from([0xe6, 0x97, 0xa5, 0xff]); // not even valid UTF-8: kept byte-exact

  test("round trip keeps the raw bytes of the name", () => {
    expect(tokens.decode(tokens.encode("s1", "a/b", name), "s1", "a/b")).toEqual(name);
  });

  test("another session, directory, key, or an altered token is INVALID_ARGUMENT", () => {
    const token = tokens.encode("s1", "a/b", name);
    expect(code(() => tokens.decode(token, "s2", "a/b"))).toBe("InvalidArgument");
    expect(code(() => tokens.decode(token, "s1", "a"))).toBe("InvalidArgument");
    expect(code(() => new PageTokens(new Uint8Array(32)).decode(token, "s1", "a/b"))).toBe("InvalidArgument");
    for (const bad of [
      "",
      ".",
      "garbage",
      `${token}=`,
      token.replace(/^./, (c) => (c === "e" ? "f" : "e")),
    ]) {
      expect(code(() => tokens.decode(bad, "s1", "a/b"))).toBe("InvalidArgument");
    }
  });
});

describe("firstAfter", () => {
  const names = ["a", "b", "d", "é", "\u{FF5E}", "\u{1F600}"].map((n) => Buffer.from(n)).sort(Buffer.compare);
  test("finds the first name after any name, present or not", () => {
    expect(firstAfter(names, Buffer.from(""))).toBe(0);
    expect(firstAfter(names, Buffer.from("a"))).toBe(1);
    expect(firstAfter(names, Buffer.from("c"))).toBe(2);
    expect(names[firstAfter(names, Buffer.from("\u{FF5E}"))]).toEqual(Buffer.from("\u{1F600}"));
    expect(firstAfter(names, Buffer.from("\u{1F600}"))).toBe(names.length);
  });
});

describe("DirListings", () => {
  const dir = mkdtempSync(join(tmpdir(), "krt-listing-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a recently changed directory is re-read every time; an old, unchanged one is reused", () => {
    const listings = new DirListings();
    writeFileSync(join(dir, "b"), "");
    writeFileSync(join(dir, "a"), "");
    const fd = openSync(dir, "r");
    try {
      expect(listings.names(fd).map(String)).toEqual(["a", "b"]);
      expect(listings.names(fd).map(String)).toEqual(["a", "b"]);
      expect(listings.reads).toBe(2); // changed just now: not trusted
      const old = new Date(Date.now() - 10_000);
      utimesSync(dir, old, old);
      listings.names(fd);
      listings.names(fd);
      expect(listings.reads).toBe(3); // unchanged for long: read once
      writeFileSync(join(dir, "c"), ""); // the change moves mtime: read again
      expect(listings.names(fd).map(String)).toEqual(["a", "b", "c"]);
      expect(listings.reads).toBe(4);
    } finally {
      closeSync(fd);
    }
  });
});
