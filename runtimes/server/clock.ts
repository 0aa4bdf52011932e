/** Microsecond wall-clock time, as the contract's *_micros fields carry it. */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}
