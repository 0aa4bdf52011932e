/** Least-squares trend of samples over time, and the soak's no-growth verdict. */

export interface Sample {
  /** Seconds since the soak started. */
  t: number;
  v: number;
}

export interface Trend {
  /** Units per hour. */
  slopePerHour: number;
  mean: number;
  /** What the trend adds over the measured window (slope × window). */
  growthOverWindow: number;
  windowSeconds: number;
}

export function trend(samples: readonly Sample[]): Trend {
  const n = samples.length;
  if (n < 2) return { slopePerHour: 0, mean: samples[0]?.v ?? 0, growthOverWindow: 0, windowSeconds: 0 };
  let st = 0;
  let sv = 0;
  for (const s of samples) {
    st += s.t;
    sv += s.v;
  }
  const mt = st / n;
  const mv = sv / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s.v - mv);
    den += (s.t - mt) ** 2;
  }
  const slope = den === 0 ? 0 : num / den; // per second
  const windowSeconds = (samples[n - 1] as Sample).t - (samples[0] as Sample).t;
  return { slopePerHour: slope * 3600, mean: mv, growthOverWindow: slope * windowSeconds, windowSeconds };
}

/**
 * No growth: over the window after warm-up, the fitted line rises by at most `fraction` of the
 * mean or `floor` (whichever is larger) — a leak of a few hundred bytes per Run at the soak's rate
 * shows as a steady climb the fit picks out of GC's saw-tooth.
 */
export function noGrowth(t: Trend, fraction: number, floor: number): boolean {
  return t.growthOverWindow <= Math.max(floor, fraction * t.mean);
}
