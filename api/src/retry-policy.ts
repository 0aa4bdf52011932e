/**
 * `spec.retryPolicy` as documented in run-spec.ts: whether a failed attempt gets another one for
 * its reason, and the backoff before it. runtimed applies it when an attempt fails on its pod, the
 * controller when it takes a Run back from a lost pod; one implementation so both agree.
 */
import { durationOr } from "./duration.ts";
import { DEFAULT_RETRY_ON, RETRYABLE_REASONS, Reason, type RetryableReason } from "./reasons.ts";
import type { RunSpec } from "./run-spec.ts";

export function maxAttempts(spec: Pick<RunSpec, "retryPolicy">): number {
  return spec.retryPolicy ? (spec.retryPolicy.maxAttempts ?? 1) : 1;
}

function isRetryable(reason: Reason): reason is RetryableReason {
  return (RETRYABLE_REASONS as readonly string[]).includes(reason);
}

/** True when attempt `attempt` (1-based) failed with `reason` and the policy allows another. */
export function canRetry(spec: Pick<RunSpec, "retryPolicy">, attempt: number, reason: Reason): boolean {
  if (!isRetryable(reason) || attempt >= maxAttempts(spec)) return false;
  const retryOn = spec.retryPolicy?.retryOn ?? DEFAULT_RETRY_ON;
  return retryOn.includes(reason);
}

/**
 * The reason and message a Run ends Failed with when attempt `attempt` failed with `reason` and is
 * not retried. When the policy retries that reason but every allowed attempt is used (and there was
 * more than one), the reason is RetriesExhausted and the message names the last failure; a client
 * tells "retries used up" from "failed once, no policy" by the reason alone. status.exitCode and
 * the tails still describe the last attempt.
 */
export function failedVerdict(
  spec: Pick<RunSpec, "retryPolicy">,
  attempt: number,
  reason: Reason,
  message: string,
): { reason: Reason; message: string } {
  const max = maxAttempts(spec);
  const retryOn = spec.retryPolicy?.retryOn ?? DEFAULT_RETRY_ON;
  if (max > 1 && attempt >= max && isRetryable(reason) && retryOn.includes(reason))
    return {
      reason: Reason.RetriesExhausted,
      message: `all ${max} attempts failed; attempt ${attempt} with ${reason}: ${message}`,
    };
  return { reason, message };
}

/** Delay before attempt `failed + 1`: initial × multiplier^(failed − 1), capped at max. */
export function retryDelayMs(spec: Pick<RunSpec, "retryPolicy">, failed: number): number {
  const b = spec.retryPolicy?.backoff;
  const initial = durationOr(b?.initial, 1000);
  const max = durationOr(b?.max, 300_000);
  const multiplier = b?.multiplier ?? 2;
  return Math.min(max, initial * multiplier ** Math.max(0, failed - 1));
}
