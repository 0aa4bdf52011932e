/**
 * A closed-loop load generator: `concurrency` loops each call, await, call again, for a fixed time
 * after a warm-up; latencies in µs from performance.now(). Failed calls are counted, not timed.
 */
export interface LoadResult {
  concurrency: number;
  calls: number;
  errors: number;
  firstError?: string;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export async function runLoad(
  call: () => Promise<void>,
  o: { concurrency: number; durationMs: number; warmupMs: number },
): Promise<LoadResult> {
  const lat: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let measuring = false;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      const t0 = performance.now();
      try {
        await call();
        if (measuring) lat.push((performance.now() - t0) * 1000);
      } catch (e) {
        if (measuring) errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  const loops = Array.from({ length: o.concurrency }, loop);
  await Bun.sleep(o.warmupMs);
  measuring = true;
  const t0 = performance.now();
  await Bun.sleep(o.durationMs);
  measuring = false;
  const elapsed = performance.now() - t0;
  stop = true;
  await Promise.all(loops);
  lat.sort((a, b) => a - b);
  return {
    concurrency: o.concurrency,
    calls: lat.length,
    errors,
    firstError,
    rps: (lat.length / elapsed) * 1000,
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    p99: pct(lat, 99),
  };
}
