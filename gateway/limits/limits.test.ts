import { describe, expect, test } from "bun:test";
import { ErrorReason, type GatewayError } from "../errors.ts";
import { ConcurrencyLimit } from "./concurrency.ts";
import { effectiveTimeoutMs, parseGrpcTimeout, requestedTimeoutMs } from "./deadline.ts";

describe("ConcurrencyLimit", () => {
  test("refuses past the bound with GatewayBusy and frees on release (once)", () => {
    const limit = new ConcurrencyLimit(2);
    const a = limit.acquire();
    const b = limit.acquire();
    let err: unknown;
    try {
      limit.acquire();
    } catch (e) {
      err = e;
    }
    expect((err as GatewayError).reason).toBe(ErrorReason.GatewayBusy);
    expect((err as GatewayError).retryAfterSeconds).toBe(1);
    a();
    a();
    expect(limit.current).toBe(1);
    limit.acquire();
    b();
    expect(limit.current).toBe(1);
  });
});

describe("deadline", () => {
  const o = { defaultTimeoutMs: 30_000, maxTimeoutMs: 900_000 };

  test.each([
    ["100m", 100],
    ["5S", 5000],
    ["2M", 120_000],
    ["1H", 3_600_000],
    ["1500u", 1.5],
    ["x", undefined],
    ["123456789S", undefined],
  ])("grpc-timeout %s = %p ms", (v, ms) => {
    expect(parseGrpcTimeout(v)).toBe(ms);
  });

  test("Connect-Timeout-Ms wins, then grpc-timeout, else nothing", () => {
    expect(requestedTimeoutMs(new Headers({ "connect-timeout-ms": "250", "grpc-timeout": "5S" }))).toBe(250);
    expect(requestedTimeoutMs(new Headers({ "grpc-timeout": "5S" }))).toBe(5000);
    expect(requestedTimeoutMs(new Headers({ "connect-timeout-ms": "soon" }))).toBeUndefined();
    expect(requestedTimeoutMs(new Headers())).toBeUndefined();
  });

  test("default when none asked, cut to the maximum, at least 1 ms", () => {
    expect(effectiveTimeoutMs(undefined, o)).toBe(30_000);
    expect(effectiveTimeoutMs(3_600_000, o)).toBe(900_000);
    expect(effectiveTimeoutMs(0.2, o)).toBe(1);
    expect(effectiveTimeoutMs(1234, o)).toBe(1234);
  });
});
