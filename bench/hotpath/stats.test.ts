import { describe, expect, test } from "bun:test";
import { maxOverlap, maxWaitingAtCapacity, percentile, summarize } from "./stats.ts";

describe("percentile (nearest rank)", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  test("of 1..100 is the value itself", () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
  });
  test("small series round up to the next rank", () => {
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([10, 20, 30], 95)).toBe(30);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2], 0)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
  });
  test("summarize sorts and reports n, max and mean", () => {
    expect(summarize([3, 1, 2, 10])).toEqual({ n: 4, p50: 2, p95: 10, p99: 10, max: 10, mean: 4 });
    expect(summarize([]).n).toBe(0);
  });
});

describe("maxOverlap", () => {
  test("counts intervals open at once; touching ends do not overlap", () => {
    expect(maxOverlap([])).toBe(0);
    expect(
      maxOverlap([
        [0, 5],
        [5, 9],
      ]),
    ).toBe(1);
    expect(
      maxOverlap([
        [0, 10],
        [2, 4],
        [3, 8],
        [9, 12],
      ]),
    ).toBe(3);
    expect(maxOverlap([[4, 4]])).toBe(0);
  });
});

describe("maxWaitingAtCapacity", () => {
  const holding = [
    [0, 10],
    [0, 10],
    [10, 20],
  ] as const;
  test("counts waiters only while every slot is held", () => {
    expect(maxWaitingAtCapacity(holding, [[0, 10]], 2)).toBe(1);
    expect(maxWaitingAtCapacity(holding, [[12, 15]], 2)).toBe(0);
    expect(maxWaitingAtCapacity(holding, [[0, 10]], 3)).toBe(0);
  });
  test("a slot released and taken at the same instant stays full", () => {
    expect(
      maxWaitingAtCapacity(
        [
          [0, 5],
          [5, 9],
        ],
        [
          [0, 9],
          [1, 9],
        ],
        1,
      ),
    ).toBe(2);
  });
});
