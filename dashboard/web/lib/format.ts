/** Ages and durations as krt prints them (krt/output/age.ts, imported, not copied). */
export { humanAge, humanDuration, humanMicros } from "@kruntimes/krt/output/age.ts";

export function stamp(micros: number): string {
  return new Date(micros / 1000).toISOString().replace("T", " ").replace("Z", "");
}
