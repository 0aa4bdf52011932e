import { describe, expect, test } from "bun:test";
import { parseOutputs } from "./outputs-file.ts";

const limits = { maxCount: 3, maxBytes: 200, maxValueBytes: 20 };
const parse = (text: string | null) =>
  parseOutputs(text === null ? null : new TextEncoder().encode(text), limits);

describe("parseOutputs", () => {
  const cases: Array<[string, string | null, ReturnType<typeof parse>]> = [
    ["missing file", null, { ok: true, outputs: {} }],
    ["empty file", "", { ok: true, outputs: {} }],
    ["pairs", "a=1\nb=two words\n", { ok: true, outputs: { a: "1", b: "two words" } }],
    ["last line wins", "a=1\na=2\n", { ok: true, outputs: { a: "2" } }],
    ["blank lines and CRLF", "\r\na=1\r\n\nb=\n", { ok: true, outputs: { a: "1", b: "" } }],
    ["= in value", "url=a=b=c", { ok: true, outputs: { url: "a=b=c" } }],
    ["dotted and dashed keys", "x.y-z_1=v", { ok: true, outputs: { "x.y-z_1": "v" } }],
    ["no =", "a=1\njunk\n", { ok: false, message: "outputs file line 2: expected key=value" }],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => expect(parse(input)).toEqual(expected));
  }

  test("bad keys", () => {
    for (const line of ["=v", "1a=v", "a b=v", `${"k".repeat(129)}=v`]) {
      const result = parse(line);
      expect(result.ok).toBe(false);
    }
  });

  test("too many keys counts distinct keys", () => {
    expect(parse("a=1\nb=1\nc=1\na=2\n").ok).toBe(true);
    const result = parse("a=1\nb=1\nc=1\nd=1\n");
    expect(result).toEqual({ ok: false, message: "outputs file has more than 3 keys" });
  });

  test("value too large, in bytes", () => {
    expect(parse(`a=${"é".repeat(10)}`).ok).toBe(true);
    expect(parse(`a=${"é".repeat(11)}`)).toEqual({
      ok: false,
      message: "outputs file line 1: value of a is 22 bytes, the limit is 20",
    });
  });

  test("file too large", () => {
    expect(parse("a=1\n".repeat(60))).toEqual({
      ok: false,
      message: "outputs file is 240 bytes, the limit is 200",
    });
  });

  test("invalid UTF-8", () => {
    expect(parseOutputs(new Uint8Array([0x61, 0x3d, 0xff]), limits)).toEqual({
      ok: false,
      message: "outputs file is not valid UTF-8",
    });
  });
});
