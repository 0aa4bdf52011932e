/** Wall-clock microseconds for Run timing (`performance` keeps sub-millisecond precision). */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** Kubernetes Time (second precision, RFC 3339), for condition timestamps. */
export function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`), for Lease timestamps. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
