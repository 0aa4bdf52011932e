import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { formatRecord, parseRecord, rfc3339Nano } from "./cri-log-format.ts";
import { parseRecords, renderRecords, selectRecords, streamLog } from "./cri-log-reader.ts";
import { CriLogWriter } from "./cri-log-writer.ts";

const dir = mkdtempSync("/tmp/krt-cri-log-");
const collect = async (g: AsyncGenerator<string>) => {
  let s = "";
  for await (const x of g) s += x;
  return s;
};

describe("CRI log format", () => {
  test("RFC3339Nano like Go: nine digits at most, trailing zeros dropped", () => {
    expect(rfc3339Nano(Date.UTC(2026, 0, 2, 3, 4, 5, 120))).toBe("2026-01-02T03:04:05.12Z");
    expect(rfc3339Nano(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02T03:04:05Z");
    expect(rfc3339Nano(Date.UTC(2026, 0, 2, 3, 4, 5) + 0.5)).toBe("2026-01-02T03:04:05.0005Z");
  });
  test("format and parse round-trip; garbage is no record", () => {
    const line = formatRecord("stderr", "a b  c", true, 1_700_000_000_000);
    expect(line).toBe("2023-11-14T22:13:20Z stderr P a b  c\n");
    expect(parseRecord(line.slice(0, -1))).toMatchObject({
      stream: "stderr",
      partial: true,
      content: "a b  c",
    });
    expect(parseRecord("garbage")).toBeUndefined();
    expect(parseRecord("notatime stdout F x")).toBeUndefined();
  });
});

describe("CRI log writer", () => {
  test("lines per stream, CRLF trimmed, long lines as partial records, a last line flushed at close", () => {
    const file = join(dir, "w.log");
    const w = new CriLogWriter(file, 8);
    w.write("stdout", Buffer.from("hel"));
    w.write("stderr", Buffer.from("oops\r\n"));
    w.write("stdout", Buffer.from("lo\n0123456789abc"));
    w.close();
    const recs = parseRecords(readFileSync(file, "utf8")).records;
    expect(recs.map((r) => [r.stream, r.partial, r.content])).toEqual([
      ["stderr", false, "oops"],
      ["stdout", false, "hello"],
      ["stdout", true, "01234567"],
      ["stdout", false, "89abc"],
    ]);
    expect(renderRecords(recs, false).text).toBe("oops\nhello\n0123456789abc\n");
  });
});

describe("CRI log reader", () => {
  const recs = parseRecords(
    [
      formatRecord("stdout", "one", false, 1000),
      formatRecord("stdout", "tw", true, 2000),
      formatRecord("stdout", "o", false, 2001),
      formatRecord("stderr", "three", false, 3000),
    ].join("") + "1970-01-01T00:00:04Z stdout F incomplete",
  ).records;
  test("an incomplete last line is not a record yet", () => {
    expect(recs.length).toBe(4);
  });
  test("tailLines counts logical lines (partials joined); sinceMs drops older records", () => {
    expect(renderRecords(selectRecords(recs, { tailLines: 2 }), false).text).toBe("two\nthree\n");
    expect(selectRecords(recs, { tailLines: 0 })).toEqual([]);
    expect(renderRecords(selectRecords(recs, { sinceMs: 2500 }), false).text).toBe("three\n");
  });
  test("timestamps and limitBytes", () => {
    expect(renderRecords(recs.slice(0, 1), true).text).toBe("1970-01-01T00:00:01Z one\n");
    expect(renderRecords(recs, false, 6)).toEqual({ text: "one\ntw", budget: 0 });
  });
  test("follow streams appended records until the writer is gone", async () => {
    const file = join(dir, "f.log");
    appendFileSync(file, formatRecord("stdout", "first", false));
    let live = true;
    const stream = streamLog(file, { timestamps: false }, () => live, undefined, 10);
    // "second" is appended only after the stream has handed out what was there: it must follow.
    expect((await stream.next()).value).toBe("first\n");
    appendFileSync(file, formatRecord("stdout", "second", false));
    expect((await stream.next()).value).toBe("second\n");
    live = false;
    expect(await collect(stream)).toBe("");
  });
});
