/** Percentiles (nearest rank, as latency benchmarks report them) and a summary of one series. */

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of `sorted` (ascending); NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted.at(-1) as number) : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** The largest number of intervals [start, end) open at one instant. */
export function maxOverlap(intervals: readonly (readonly [number, number])[]): number {
  const edges: [number, number][] = [];
  for (const [a, b] of intervals) if (b > a) edges.push([a, 1], [b, -1]);
  // At equal times, close before open: [0,5) and [5,9) do not overlap.
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let max = 0;
  for (const [, d] of edges) {
    open += d;
    max = Math.max(max, open);
  }
  return max;
}

/**
 * The most intervals of `waiting` open at an instant when at least `capacity` intervals of
 * `holding` are open: Runs that waited because every slot was taken (0 when capacity never filled).
 */
export function maxWaitingAtCapacity(
  holding: readonly (readonly [number, number])[],
  waiting: readonly (readonly [number, number])[],
  capacity: number,
): number {
  const edges: [number, number, number][] = []; // time, held delta, waiting delta
  for (const [a, b] of holding) if (b > a) edges.push([a, 1, 0], [b, -1, 0]);
  for (const [a, b] of waiting) if (b > a) edges.push([a, 0, 1], [b, 0, -1]);
  edges.sort((x, y) => x[0] - y[0]);
  let held = 0;
  let waits = 0;
  let max = 0;
  for (let i = 0; i < edges.length; i++) {
    const e = edges[i] as [number, number, number];
    held += e[1];
    waits += e[2];
    // Judge an instant only after every edge at that time is applied.
    if (i + 1 < edges.length && (edges[i + 1] as [number, number, number])[0] === e[0]) continue;
    if (held >= capacity) max = Math.max(max, waits);
  }
  return max;
}
