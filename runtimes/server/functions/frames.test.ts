import { describe, expect, test } from "bun:test";
import { encodeFrame, FrameReader } from "./frames.ts";

describe("frames", () => {
  test("round-trip, split at every byte and joined", () => {
    const a = encodeFrame({ i: "x", h: { a: "é" } }, new Uint8Array([0, 1, 2, 255]));
    const b = encodeFrame({ k: "r" }, new Uint8Array(0));
    const all = new Uint8Array([...a, ...b]);
    for (let cut = 0; cut <= all.length; cut++) {
      const reader = new FrameReader();
      const frames = [...reader.push(all.slice(0, cut)), ...reader.push(all.slice(cut))];
      expect(frames.map((f) => f.header)).toEqual([{ i: "x", h: { a: "é" } }, { k: "r" }]);
      expect([...frames[0]!.body]).toEqual([0, 1, 2, 255]);
      expect(frames[1]!.body.length).toBe(0);
    }
  });
});
