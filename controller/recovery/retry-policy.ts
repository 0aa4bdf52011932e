/** `spec.retryPolicy`: whether a failed attempt gets another one, and after what delay. */
import { DEFAULT_RETRY_ON, type RetryableReason, type RunSpec } from "@kruntimes/api";
import { durationOr } from "../util/duration.ts";

export function maxAttempts(spec: Pick<RunSpec, "retryPolicy">): number {
  return spec.retryPolicy ? (spec.retryPolicy.maxAttempts ?? 1) : 1;
}

/** True when attempt `attempt` (1-based) failed with `reason` and another attempt is allowed. */
export function canRetry(
  spec: Pick<RunSpec, "retryPolicy">,
  attempt: number,
  reason: RetryableReason,
): boolean {
  if (attempt >= maxAttempts(spec)) return false;
  const retryOn = spec.retryPolicy?.retryOn ?? DEFAULT_RETRY_ON;
  return retryOn.includes(reason);
}

/** Delay before attempt `failed + 1`: initial × multiplier^(failed − 1), capped at max. */
export function retryDelayMs(spec: Pick<RunSpec, "retryPolicy">, failed: number): number {
  const b = spec.retryPolicy?.backoff;
  const initial = durationOr(b?.initial, 1000);
  const max = durationOr(b?.max, 300_000);
  const multiplier = b?.multiplier ?? 2;
  return Math.min(max, initial * multiplier ** Math.max(0, failed - 1));
}
