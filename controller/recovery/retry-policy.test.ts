import { describe, expect, test } from "bun:test";
import { Reason, type RunSpec } from "@kruntimes/api";
import { canRetry, maxAttempts, retryDelayMs } from "./retry-policy.ts";

const spec = (retryPolicy?: RunSpec["retryPolicy"]) => ({ retryPolicy });

describe("retry policy", () => {
  test("no policy means one attempt", () => {
    expect(maxAttempts(spec())).toBe(1);
    expect(canRetry(spec(), 1, Reason.PodGone)).toBe(false);
  });

  const cases: [string, RunSpec["retryPolicy"], number, Parameters<typeof canRetry>[2], boolean][] = [
    ["default retryOn covers PodGone", { maxAttempts: 3 }, 1, Reason.PodGone, true],
    ["default retryOn excludes NonZeroExit", { maxAttempts: 3 }, 1, Reason.NonZeroExit, false],
    ["last attempt is final", { maxAttempts: 3 }, 3, Reason.PodGone, false],
    ["explicit retryOn", { maxAttempts: 2, retryOn: [Reason.NonZeroExit] }, 1, Reason.NonZeroExit, true],
    [
      "explicit retryOn excludes others",
      { maxAttempts: 2, retryOn: [Reason.NonZeroExit] },
      1,
      Reason.PodGone,
      false,
    ],
  ];
  for (const [name, policy, attempt, reason, want] of cases) {
    test(name, () => expect(canRetry(spec(policy), attempt, reason)).toBe(want));
  }

  test("backoff grows by the multiplier and stops at max", () => {
    const s = spec({ maxAttempts: 10, backoff: { initial: "1s", max: "5s", multiplier: 2 } });
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(s, n))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });
});
