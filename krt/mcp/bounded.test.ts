import { describe, expect, test } from "bun:test";
import { boundText, encodeContent, HeadTail, utf8Prefix, utf8Suffix } from "./bounded.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("HeadTail", () => {
  test("keeps everything up to the limit, unmarked", () => {
    const h = new HeadTail(10);
    h.push(enc("hello"));
    h.push(enc("world"));
    expect({ text: h.text(), total: h.total, truncated: h.truncated }).toEqual({
      text: "helloworld",
      total: 10,
      truncated: false,
    });
  });

  test("over the limit: the first and last halves, and a marker with the bytes left out and the total", () => {
    const h = new HeadTail(10);
    for (const piece of ["0123", "4567", "89ab", "cdef", "ghij"]) h.push(enc(piece));
    expect(h.total).toBe(20);
    expect(h.truncated).toBe(true);
    expect(h.text()).toBe(
      "01234\n[… 10 bytes omitted by krt mcp (20 bytes in all; only the first and last are kept) …]\nfghij",
    );
  });

  test("one chunk larger than the limit, and many tiny chunks, give the same result", () => {
    const data = "x".repeat(1000) + "THE END";
    const big = new HeadTail(64);
    big.push(enc(data));
    const small = new HeadTail(64);
    for (const ch of data) small.push(enc(ch));
    expect(small.text()).toBe(big.text());
    expect(big.text().endsWith("THE END")).toBe(true);
    expect(big.text().startsWith("x".repeat(32))).toBe(true);
  });

  test("holds at most the limit however much is pushed", () => {
    const h = new HeadTail(100);
    for (let i = 0; i < 10_000; i++) h.push(enc("0123456789"));
    expect(h.total).toBe(100_000);
    const kept = h.text().replace(/\n\[… .* …\]\n/, "");
    expect(enc(kept).byteLength).toBe(100);
  });

  test("a cut inside a multi-byte character drops the partial character, never garbles it", () => {
    const h = new HeadTail(6);
    h.push(enc("ééééééééé")); // 2 bytes each; a head of 3 bytes ends inside the second
    const [head, tail] = h.text().split(/\n\[.*\]\n/);
    expect(head).toBe("é");
    expect(tail).toBe("é");
    expect(h.text()).not.toContain("\uFFFD");
  });

  test("the pushed buffers may be reused by the caller", () => {
    const h = new HeadTail(8);
    const buf = enc("abcdefgh");
    h.push(buf);
    buf.fill(0x7a);
    expect(h.text()).toBe("abcdefgh");
  });
});

describe("boundText", () => {
  test("counts bytes, not characters", () => {
    const r = boundText("€".repeat(10), 12); // 30 bytes
    expect(r.bytes).toBe(30);
    expect(r.truncated).toBe(true);
    expect(r.text).toContain("30 bytes in all");
  });
  test("short text is returned as is", () => {
    expect(boundText("ok", 10)).toEqual({ text: "ok", bytes: 2, truncated: false });
  });
});

describe("encodeContent", () => {
  test("UTF-8 stays text; a prefix cut in a character is trimmed to whole characters", () => {
    expect(encodeContent(enc("héllo"), false)).toEqual({ content: "héllo", encoding: "utf-8", bytes: 6 });
    const cut = enc("hé").subarray(0, 2); // "h" and the first byte of é
    expect(encodeContent(cut, true)).toEqual({ content: "h", encoding: "utf-8", bytes: 1 });
  });
  test("other bytes come back as base64", () => {
    const bin = new Uint8Array([0, 255, 1, 254]);
    expect(encodeContent(bin, false)).toEqual({ content: "AP8B/g==", encoding: "base64", bytes: 4 });
  });
});

test("utf8Prefix and utf8Suffix cut at character boundaries only", () => {
  const b = enc("a€b"); // 61 e2 82 ac 62
  expect([...utf8Prefix(b.subarray(0, 3))]).toEqual([0x61]);
  expect([...utf8Prefix(b.subarray(0, 4))]).toEqual([0x61, 0xe2, 0x82, 0xac]);
  expect([...utf8Suffix(b.subarray(2))]).toEqual([0x62]);
  expect([...utf8Suffix(b.subarray(1))]).toEqual([0xe2, 0x82, 0xac, 0x62]);
  const emoji = enc("😀"); // 4 bytes
  expect(utf8Prefix(emoji.subarray(0, 3)).byteLength).toBe(0);
  expect(utf8Prefix(emoji).byteLength).toBe(4);
});
