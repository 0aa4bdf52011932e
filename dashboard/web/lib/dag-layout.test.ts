import { expect, test } from "bun:test";
import { BOX_W, dagLayout } from "./dag-layout.ts";

test("columns by depth in the needs DAG, stacked by name, one edge per need", () => {
  const { boxes, edges, width } = dagLayout(
    {
      package: { needs: ["test", "lint"] },
      build: {},
      lint: { needs: ["build"] },
      test: { needs: ["build"] },
    },
    (job) => (job === "build" ? 3 : 1),
  );
  expect(boxes.map((b) => [b.job, b.col])).toEqual([
    ["build", 0],
    ["lint", 1],
    ["test", 1],
    ["package", 2],
  ]);
  const lint = boxes.find((b) => b.job === "lint");
  const test_ = boxes.find((b) => b.job === "test");
  expect(test_?.y).toBe((lint?.y ?? 0) + (lint?.h ?? 0) + 24);
  expect(boxes.find((b) => b.job === "build")?.h).toBeGreaterThan(lint?.h ?? 0);
  expect(edges.map((e) => `${e.from}>${e.to}`).sort()).toEqual([
    "build>lint",
    "build>test",
    "lint>package",
    "test>package",
  ]);
  expect(width).toBe(2 * (BOX_W + 70) + BOX_W);
});

test("unknown needs and cycles do not break the drawing", () => {
  const { boxes, edges } = dagLayout(
    { a: { needs: ["b"] }, b: { needs: ["a"] }, c: { needs: ["zz"] } },
    () => 0,
  );
  expect(boxes.map((b) => b.job).sort()).toEqual(["a", "b", "c"]);
  expect(edges.every((e) => e.from !== "zz")).toBe(true);
});
