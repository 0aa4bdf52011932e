/**
 * The CRI container log format kubelet reads (/var/log/pods/…): one record per line,
 * `<RFC3339Nano timestamp> <stdout|stderr> <F|P> <content>`, F for a full line (its newline is
 * not stored), P for a piece of a longer line that continues in the next record.
 */
import { wallClockMs } from "@kruntimes/api";
export type LogStream = "stdout" | "stderr";

export interface LogRecord {
  time: string;
  /** Milliseconds since the epoch (sub-millisecond digits dropped), for `sinceSeconds`. */
  timeMs: number;
  stream: LogStream;
  partial: boolean;
  content: string;
}

/** Go's time.RFC3339Nano in UTC: nine fraction digits with trailing zeros removed. */
export function rfc3339Nano(epochMs: number): string {
  const whole = Math.floor(epochMs / 1000);
  const nanos = Math.round((epochMs - whole * 1000) * 1e6);
  const base = new Date(whole * 1000).toISOString().slice(0, 19);
  if (nanos === 0) return `${base}Z`;
  const frac = String(Math.min(nanos, 999_999_999)).padStart(9, "0").replace(/0+$/, "");
  return `${base}.${frac}Z`;
}

/** Wall-clock now with sub-millisecond precision. */
export const nowMs: () => number = wallClockMs;

export function formatRecord(
  stream: LogStream,
  content: string,
  partial: boolean,
  epochMs = nowMs(),
): string {
  return `${rfc3339Nano(epochMs)} ${stream} ${partial ? "P" : "F"} ${content}\n`;
}

export function parseRecord(line: string): LogRecord | undefined {
  const a = line.indexOf(" ");
  const b = line.indexOf(" ", a + 1);
  const c = line.indexOf(" ", b + 1);
  if (a < 0 || b < 0 || c < 0) return undefined;
  const time = line.slice(0, a);
  const stream = line.slice(a + 1, b);
  const tag = line.slice(b + 1, c);
  if ((stream !== "stdout" && stream !== "stderr") || (tag !== "F" && tag !== "P")) return undefined;
  const timeMs = Date.parse(time);
  if (Number.isNaN(timeMs)) return undefined;
  return { time, timeMs, stream, partial: tag === "P", content: line.slice(c + 1) };
}

/** How a record is printed to `kubectl logs`: content, newline for a full line, optional timestamp. */
export function renderRecord(r: LogRecord, timestamps: boolean): string {
  return `${timestamps ? `${r.time} ` : ""}${r.content}${r.partial ? "" : "\n"}`;
}
