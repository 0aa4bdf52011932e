import { expect, test } from "bun:test";
import { SseParser } from "./sse-parser.ts";

test("messages split across chunks, comments skipped, multi-line data joined", () => {
  const p = new SseParser();
  expect(p.push(": open\n\nevent: snap")).toEqual([]);
  expect(p.push('shot\ndata: {"a":1}\n\nevent: change\ndata: x\r\ndata: y\n')).toEqual([
    { event: "snapshot", data: '{"a":1}' },
  ]);
  expect(p.push("\n")).toEqual([{ event: "change", data: "x\ny" }]);
  expect(p.push("data: plain\n\n")).toEqual([{ event: "message", data: "plain" }]);
});
