/** Wall-clock microseconds for Run timing (sub-millisecond precision; see api/src/clock.ts). */
export { nowMicros } from "@kruntimes/api";

/** Kubernetes Time (second precision, RFC 3339), for condition timestamps. */
export function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`), for Lease timestamps. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
