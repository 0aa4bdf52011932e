import { describe, expect, test } from "bun:test";
import { KeyedHeap } from "./heap.ts";

interface Item {
  key: string;
  at: number;
}

function heap() {
  return new KeyedHeap<Item>(
    (i) => i.key,
    (a, b) => a.at < b.at,
  );
}

describe("KeyedHeap", () => {
  test("pops in order", () => {
    const h = heap();
    const ats = [5, 3, 9, 1, 7, 2, 8, 6, 4, 0];
    for (const at of ats) h.push({ key: `k${at}`, at });
    const out: number[] = [];
    for (let i = h.pop(); i; i = h.pop()) out.push(i.at);
    expect(out).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("push of an existing key moves it", () => {
    const h = heap();
    h.push({ key: "a", at: 1 });
    h.push({ key: "b", at: 2 });
    h.push({ key: "a", at: 3 });
    expect(h.size).toBe(2);
    expect(h.pop()?.key).toBe("b");
    expect(h.pop()?.key).toBe("a");
  });

  test("remove keeps the order of the rest", () => {
    const h = heap();
    for (let at = 0; at < 50; at++) h.push({ key: `k${at}`, at: (at * 37) % 50 });
    for (let at = 0; at < 50; at += 3) h.remove(`k${at}`);
    const out: number[] = [];
    for (let i = h.pop(); i; i = h.pop()) out.push(i.at);
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(out.length).toBe(50 - 17);
    expect(h.has("k1")).toBe(false);
  });
});
