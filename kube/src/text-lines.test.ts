import { describe, expect, test } from "bun:test";
import { textLines } from "./text-lines.ts";

/** A body that delivers `chunks` one read at a time, as a chunked response does. */
function body(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === "string" ? enc.encode(ch) : ch);
      c.close();
    },
  });
}

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const l of it) out.push(l);
  return out;
}

describe("textLines", () => {
  test("lines split across and within chunks", async () => {
    expect(await collect(textLines(body(["a\nb", "c\n\nd\n"])))).toEqual(["a", "bc", "", "d"]);
  });

  test("a last line without a newline is kept, or dropped when asked", async () => {
    expect(await collect(textLines(body(["a\nrest"])))).toEqual(["a", "rest"]);
    expect(await collect(textLines(body(["a\nrest"]), { dropUnterminated: true }))).toEqual(["a"]);
  });

  test("a multi-byte character split between chunks", async () => {
    const bytes = new TextEncoder().encode("µs\n");
    expect(await collect(textLines(body([bytes.slice(0, 1), bytes.slice(1)])))).toEqual(["µs"]);
  });

  test("stopping early cancels the body", async () => {
    let cancelled = false;
    const b = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new TextEncoder().encode("x\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _ of textLines(b)) break;
    await Bun.sleep(0);
    expect(cancelled).toBe(true);
  });
});
