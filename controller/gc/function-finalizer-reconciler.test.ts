import { describe, expect, test } from "bun:test";
import { FUNCTION_FINALIZER, type Run } from "@kruntimes/api";
import { aRun, boundTo } from "../testing/fixtures.ts";
import { finalizerVerdict } from "./function-finalizer-reconciler.ts";

function fn(status: Run["status"], o: { deleting?: boolean; finalizer?: boolean } = {}): Run {
  const r = aRun({ name: "f", mode: "function", status });
  r.metadata.finalizers = o.finalizer === false ? [] : ["other", FUNCTION_FINALIZER];
  if (o.deleting) r.metadata.deletionTimestamp = "2026-12-03T00:00:00Z";
  return r;
}

describe("finalizerVerdict", () => {
  const grace = 5000;
  test("a Run without the finalizer, or one a runtimed serves, is left alone", () => {
    expect(finalizerVerdict(fn(boundTo("p", 1, "Ready"), { finalizer: false }), 0, grace).kind).toBe("keep");
    expect(finalizerVerdict(fn(boundTo("p", 1, "Ready")), 0, grace).kind).toBe("keep");
    // Deleted while Ready on a live pod: its runtimed drains and removes it.
    expect(finalizerVerdict(fn(boundTo("p", 1, "Ready"), { deleting: true }), 0, grace).kind).toBe("keep");
  });
  test("a deleted Run that holds no pod (re-queued) loses it at once", () => {
    expect(finalizerVerdict(fn({ phase: "Pending", attempt: 2 }, { deleting: true }), 0, grace).kind).toBe(
      "remove",
    );
  });
  test("a finished Run gets a grace period for its runtimed, then the controller removes it", () => {
    const done = { ...boundTo("p", 1, "Succeeded"), timing: { reportedMicros: 10_000_000 } } as Run["status"];
    expect(finalizerVerdict(fn(done), 12_000, grace)).toEqual({ kind: "wait", ms: 3000 });
    expect(finalizerVerdict(fn(done), 15_000, grace).kind).toBe("remove");
  });
});
