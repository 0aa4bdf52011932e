import { describe, expect, test } from "bun:test";
import { TailBuffer, truncationMarker } from "./tail-buffer.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe("TailBuffer", () => {
  test("keeps everything while under the limit", () => {
    const tail = new TailBuffer(100);
    tail.push(enc("hello "));
    tail.push(enc("world"));
    const snap = tail.snapshot();
    expect(dec(snap.data)).toBe("hello world");
    expect(snap.truncated).toBe(false);
    expect(snap.total).toBe(11);
  });

  test("truncates to the limit with a marker that counts the dropped bytes", () => {
    const tail = new TailBuffer(64);
    for (let i = 0; i < 100; i++) tail.push(enc(`line ${String(i).padStart(3, "0")}\n`));
    const snap = tail.snapshot();
    expect(snap.truncated).toBe(true);
    expect(snap.total).toBe(900);
    expect(snap.data.length).toBeLessThanOrEqual(64);
    const text = dec(snap.data);
    const match = /^\[\.\.\. (\d+) bytes truncated \.\.\.\]\n/.exec(text);
    expect(match).not.toBeNull();
    const kept = text.slice(match![0].length);
    expect(Number(match![1]) + kept.length).toBe(900);
    expect(kept.endsWith("line 099\n")).toBe(true);
  });

  test("one huge chunk is cut too", () => {
    const tail = new TailBuffer(50);
    tail.push(enc("x".repeat(10_000)));
    const snap = tail.snapshot();
    expect(snap.data.length).toBeLessThanOrEqual(50);
    const text = dec(snap.data);
    const kept = text.replace(/^\[\.\.\. \d+ bytes truncated \.\.\.\]\n/, "");
    expect(kept).toMatch(/^x+$/);
    expect(text).toBe(truncationMarker(10_000 - kept.length) + kept);
  });

  test("does not start the kept part inside a UTF-8 sequence", () => {
    const tail = new TailBuffer(40);
    tail.push(enc("é".repeat(200)));
    const snap = tail.snapshot();
    const text = new TextDecoder("utf-8", { fatal: true }).decode(snap.data);
    expect(text).toContain("ééé");
  });

  test("raw() returns the newest bytes and their stream offset", () => {
    const tail = new TailBuffer(5);
    tail.push(enc("abc"));
    tail.push(enc("defg"));
    tail.push(enc("h"));
    const raw = tail.raw();
    expect(dec(raw.data)).toBe("defgh");
    expect(raw.offset).toBe(3);
  });

  test("a limit smaller than the marker still bounds the tail", () => {
    const tail = new TailBuffer(8);
    tail.push(enc("0123456789abcdef"));
    expect(tail.snapshot().data.length).toBe(8);
  });
});
