/**
 * Go-style durations (`250ms`, `1m30s`, `1.5h`) as the Run API writes `spec.timeout` and
 * `spec.retryPolicy.backoff`; the controller's flags use the same syntax. One parser, so the
 * controller, runtimed and krt read a Run's durations the same way.
 */
import { DURATION_PATTERN } from "./schema/common.ts";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds in `text`; throws on anything that is not a sequence of number+unit parts. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === "0") return 0;
  if (s === "") throw new Error("empty duration");
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const start = PART.lastIndex;
    const m = PART.exec(s);
    if (!m || m.index !== start) throw new Error(`invalid duration "${text}" (use e.g. 500ms, 15s, 1m30s)`);
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return total;
}

/** `parseDuration`, or `fallback` when `text` is undefined or invalid (the CRD validates the shape). */
export function durationOr(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  try {
    return parseDuration(text);
  } catch {
    return fallback;
  }
}

const API_SHAPE = new RegExp(DURATION_PATTERN);

/** True when `text` has the shape the CRD accepts for `spec.timeout` and backoff (no "0", µs or spaces). */
export function isDuration(text: string): boolean {
  return API_SHAPE.test(text);
}

/** Milliseconds of a duration in the CRD's shape, or undefined when `text` is not one (CLI flags). */
export function parseApiDuration(text: string): number | undefined {
  return isDuration(text) ? parseDuration(text) : undefined;
}
