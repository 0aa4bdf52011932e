/**
 * Closed-loop load: `concurrency` callers, each issuing its next call when the previous answered,
 * for `durationMs` after a warm-up; every call's latency (performance.now, µs precision) and the
 * completed calls per second. A failed call is counted and not timed.
 */
import { type Summary, summarize } from "../hotpath/stats.ts";

export interface LoadResult {
  concurrency: number;
  calls: number;
  failures: number;
  firstFailure?: string;
  perSecond: number;
  /** Milliseconds. */
  latency: Summary;
}

export async function closedLoop(
  call: (i: number) => Promise<void>,
  concurrency: number,
  durationMs: number,
  warmupMs: number,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let recording = false;
  let stop = false;
  let n = 0;
  const worker = async () => {
    while (!stop) {
      const i = n++;
      const t0 = performance.now();
      try {
        await call(i);
        if (recording) latencies.push(performance.now() - t0);
      } catch (e) {
        if (recording) {
          failures++;
          firstFailure ??= e instanceof Error ? e.message : String(e);
        }
      }
    }
  };
  const workers = Array.from({ length: concurrency }, () => worker());
  await Bun.sleep(warmupMs);
  recording = true;
  const t0 = performance.now();
  await Bun.sleep(durationMs);
  recording = false;
  const elapsed = performance.now() - t0;
  stop = true;
  await Promise.all(workers);
  return {
    concurrency,
    calls: latencies.length,
    failures,
    ...(firstFailure ? { firstFailure } : {}),
    perSecond: latencies.length / (elapsed / 1000),
    latency: summarize(latencies),
  };
}
