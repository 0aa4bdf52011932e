/**
 * Wall-clock time with sub-millisecond precision, for the `*Micros` fields every component writes.
 *
 * `performance.timeOrigin + performance.now()` alone is not wall time: it follows the monotonic
 * clock, which stops while a machine or VM is suspended and ignores steps of the system clock, so
 * after a pause it lags the real time (CI saw a Runtime Server 22 s behind `Date.now()`). Here the
 * monotonic clock only refines the last `Date.now()` reading; whenever the two disagree by more
 * than a millisecond the wall clock wins and the anchor moves.
 */
let anchorWallMs = Date.now();
let anchorMonoMs = performance.now();

/** Milliseconds since the Unix epoch, with the monotonic clock's sub-millisecond precision. */
export function wallClockMs(): number {
  const mono = performance.now();
  const wall = Date.now();
  const estimate = anchorWallMs + (mono - anchorMonoMs);
  // Date.now() truncates to whole milliseconds: a true estimate lies in [wall, wall + 1).
  if (estimate < wall || estimate >= wall + 1) {
    anchorWallMs = wall;
    anchorMonoMs = mono;
    return wall;
  }
  return estimate;
}

/** Microseconds since the Unix epoch (see wallClockMs). */
export function nowMicros(): number {
  return Math.round(wallClockMs() * 1000);
}
