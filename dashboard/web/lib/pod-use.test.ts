import { expect, test } from "bun:test";
import type { RunSummary } from "../../shared/types.ts";
import { podUse } from "./pod-use.ts";

const run = (name: string, o: Partial<RunSummary>): RunSummary => ({
  name,
  namespace: "ns",
  uid: name,
  labels: {},
  mode: "task",
  runtime: "bash",
  phase: "Running",
  attempt: 1,
  created: "",
  runsRequest: 1,
  ...o,
});

test("only Runs still on their pod count, by their runs request", () => {
  const use = podUse([
    run("a", { pod: "p1" }),
    run("b", { pod: "p1", runsRequest: 3, phase: "Ready" }),
    run("c", { pod: "p1", phase: "Succeeded" }),
    run("d", { pod: "p2", phase: "Scheduled" }),
    run("e", { phase: "Pending" }),
  ]);
  expect(use.get("p1")?.used).toBe(4);
  expect(use.get("p1")?.runs.map((r) => r.name)).toEqual(["a", "b"]);
  expect(use.get("p2")?.used).toBe(1);
  expect(use.size).toBe(2);
});
