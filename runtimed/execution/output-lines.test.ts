import { describe, expect, test } from "bun:test";
import { LineSplitter } from "./output-lines.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("LineSplitter", () => {
  test("joins chunks into lines and flushes the last partial line", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push(enc("a\nb"));
    s.push(enc("c\n\nd"));
    expect(lines).toEqual(["a", "bc", ""]);
    s.flush();
    expect(lines).toEqual(["a", "bc", "", "d"]);
  });
  test("a multi-byte character split across chunks is decoded whole", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const b = enc("é\n");
    s.push(b.slice(0, 1));
    s.push(b.slice(1));
    expect(lines).toEqual(["é"]);
  });
  test("long lines are emitted in bounded pieces; CRLF loses the CR", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l), 4);
    s.push(enc("abcdefghij"));
    expect(lines).toEqual(["abcd", "efgh"]);
    s.push(enc("\r\n"));
    expect(lines).toEqual(["abcd", "efgh", "ij"]);
    s.flush();
    expect(lines).toEqual(["abcd", "efgh", "ij"]);
  });
});
