import { describe, expect, test } from "bun:test";
import type { Lease } from "../kube-types.ts";
import { fingerprint, heldByOther } from "./lease-record.ts";

const lease = (holder: string, renew = "2026-01-01T00:00:00.000000Z"): Lease => ({
  metadata: { name: "l" },
  spec: { holderIdentity: holder, renewTime: renew, leaseDurationSeconds: 15 },
});

describe("leader Lease expiry (observed time)", () => {
  const observed = { fingerprint: fingerprint(lease("other")), atMs: 1000 };
  const cases: [string, Lease, number, boolean][] = [
    ["another holder, seen unchanged for less than the duration", lease("other"), 1000 + 14_999, true],
    ["another holder, unchanged for the whole duration: expired", lease("other"), 1000 + 15_000, false],
    ["our own Lease", lease("me"), 1000, false],
    ["released (empty holder)", lease(""), 1000, false],
  ];
  for (const [name, l, now, want] of cases) {
    test(name, () => expect(heldByOther(l, "me", observed, now, 15_000)).toBe(want));
  }

  test("a renewal changes the fingerprint", () => {
    expect(fingerprint(lease("a", "t1"))).not.toBe(fingerprint(lease("a", "t2")));
  });
});
