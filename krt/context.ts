/** What main.ts hands every command besides the streams: the environment and a microsecond clock. */
import type { BaseContext } from "clipanion";

export interface KrtContext extends BaseContext {
  env: Record<string, string | undefined>;
  /** Wall-clock microseconds since the Unix epoch. */
  nowMicros(): number;
}

export function wallClockMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}
