/** Go-style durations (`1h30m`, `500ms`), the format `spec.timeout` takes. */

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const WHOLE = /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/;
const PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)/g;

export function isDuration(s: string): boolean {
  return WHOLE.test(s);
}

/** Milliseconds of a Go-style duration, or undefined when it is not one. */
export function parseDurationMs(s: string): number | undefined {
  if (!WHOLE.test(s)) return undefined;
  let ms = 0;
  for (const m of s.matchAll(PART)) ms += Number(m[1]) * (UNIT_MS[m[2] ?? "s"] ?? 0);
  return ms;
}
