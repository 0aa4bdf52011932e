import { describe, expect, test } from "bun:test";
import { parseDuration } from "./duration.ts";
import { Reason as R, type Reason } from "./reasons.ts";
import { canRetry, failedVerdict, maxAttempts, retryDelayMs } from "./retry-policy.ts";
import type { RetryPolicy } from "./run-spec.ts";

const spec = (retryPolicy?: RetryPolicy) => ({ retryPolicy });

describe("canRetry", () => {
  const cases: [string, RetryPolicy | undefined, number, Reason, boolean][] = [
    ["no policy: one attempt", undefined, 1, R.PodGone, false],
    ["default retryOn covers pod failures", { maxAttempts: 3 }, 1, R.PodUnhealthy, true],
    ["default retryOn skips code failures", { maxAttempts: 3 }, 1, R.NonZeroExit, false],
    ["listed NonZeroExit retries", { maxAttempts: 3, retryOn: [R.NonZeroExit] }, 2, R.NonZeroExit, true],
    ["last attempt is final", { maxAttempts: 3, retryOn: [R.NonZeroExit] }, 3, R.NonZeroExit, false],
    ["explicit retryOn excludes others", { maxAttempts: 2, retryOn: [R.NonZeroExit] }, 1, R.PodGone, false],
    ["Timeout when listed", { maxAttempts: 2, retryOn: [R.Timeout] }, 1, R.Timeout, true],
    ["Cancelled never retries", { maxAttempts: 5, retryOn: [R.NonZeroExit] }, 1, R.Cancelled, false],
    [
      "OutputsInvalid never retries",
      { maxAttempts: 5, retryOn: [R.NonZeroExit] },
      1,
      R.OutputsInvalid,
      false,
    ],
  ];
  for (const [name, policy, attempt, reason, want] of cases)
    test(name, () => expect(canRetry(spec(policy), attempt, reason)).toBe(want));

  test("maxAttempts defaults to 1 with and without a policy", () => {
    expect(maxAttempts(spec())).toBe(1);
    expect(maxAttempts(spec({}))).toBe(1);
    expect(maxAttempts(spec({ maxAttempts: 4 }))).toBe(4);
  });
});

describe("retryDelayMs", () => {
  test("defaults: 1s doubling", () => {
    expect([1, 2, 3].map((n) => retryDelayMs(spec({ maxAttempts: 5 }), n))).toEqual([1000, 2000, 4000]);
  });
  test("grows by the multiplier and stops at max", () => {
    const s = spec({ maxAttempts: 10, backoff: { initial: "100ms", max: "1s", multiplier: 3 } });
    expect([1, 2, 3, 4].map((n) => retryDelayMs(s, n))).toEqual([100, 300, 900, 1000]);
    const t = spec({ maxAttempts: 10, backoff: { initial: "1s", max: "5s", multiplier: 2 } });
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(t, n))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });
  test("durations", () => {
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("250ms")).toBe(250);
    expect(() => parseDuration("5 minutes")).toThrow(/invalid duration/);
  });
});

describe("failedVerdict", () => {
  test("the last allowed attempt of a retried reason: RetriesExhausted naming the last failure", () => {
    const v = failedVerdict(
      spec({ maxAttempts: 3, retryOn: [R.NonZeroExit] }),
      3,
      R.NonZeroExit,
      "exit code 2",
    );
    expect(v).toEqual({
      reason: R.RetriesExhausted,
      message: "all 3 attempts failed; attempt 3 with NonZeroExit: exit code 2",
    });
  });
  test("the default retryOn covers pod failures", () => {
    expect(failedVerdict(spec({ maxAttempts: 2 }), 2, R.PodGone, "gone").reason).toBe(R.RetriesExhausted);
  });
  test("its own reason: no policy, one attempt, a reason not retried, or attempts left", () => {
    expect(failedVerdict(spec(), 1, R.NonZeroExit, "m").reason).toBe(R.NonZeroExit);
    expect(
      failedVerdict(spec({ maxAttempts: 1, retryOn: [R.NonZeroExit] }), 1, R.NonZeroExit, "m").reason,
    ).toBe(R.NonZeroExit);
    expect(failedVerdict(spec({ maxAttempts: 3 }), 3, R.NonZeroExit, "m").reason).toBe(R.NonZeroExit);
    expect(
      failedVerdict(spec({ maxAttempts: 3, retryOn: [R.Timeout] }), 3, R.OutputsInvalid, "m").reason,
    ).toBe(R.OutputsInvalid);
  });
});
