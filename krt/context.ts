/** What main.ts hands every command besides the streams: the environment and a microsecond clock. */
import type { BaseContext } from "clipanion";

export interface KrtContext extends BaseContext {
  env: Record<string, string | undefined>;
  /** Wall-clock microseconds since the Unix epoch. */
  nowMicros(): number;
}

export { nowMicros as wallClockMicros } from "@kruntimes/api";
