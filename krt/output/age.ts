/** Human ages and durations, as kubectl prints them: 42s, 5m10s, 3h12m, 4d. */

export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 && h < 8 ? `${h}h${m % 60}m` : `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** Age of an RFC 3339 timestamp at `nowMs`; `<unknown>` when it is missing. */
export function humanAge(timestamp: string | undefined, nowMs: number): string {
  if (!timestamp) return "<unknown>";
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? "<unknown>" : humanDuration(nowMs - t);
}

/** A microsecond interval for timing breakdowns: 850µs, 12.3ms, 1.52s. */
export function humanMicros(us: number): string {
  if (us < 1000) return `${us}µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)}ms`;
  return `${(us / 1_000_000).toFixed(2)}s`;
}
