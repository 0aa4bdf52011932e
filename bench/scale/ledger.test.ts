import { describe, expect, test } from "bun:test";
import { judgeLedger } from "./ledger.ts";

describe("scale ledger", () => {
  test("clean: every created name once, attempt 1", () => {
    const v = judgeLedger("r-0 1\nr-1 1\nr-2 1\n", ["r-0", "r-1", "r-2"]);
    expect(v).toEqual({ lines: 3, missing: [], doubled: [], retried: [], unknown: [] });
  });

  test("missing, doubled (same attempt twice), retried (two attempts) and unknown names", () => {
    const v = judgeLedger("r-0 1\nr-0 1\nr-1 1\nr-1 2\nzz 1\n\n", ["r-0", "r-1", "r-2"]);
    expect(v.lines).toBe(5);
    expect(v.missing).toEqual(["r-2"]);
    expect(v.doubled).toEqual(["r-0 1 ×2"]);
    expect(v.retried).toEqual(["r-1 (attempts 1, 2)"]);
    expect(v.unknown).toEqual(["zz"]);
  });
});
