/**
 * Reading CRI log files the way kubelet serves them: `tailLines` counts logical lines (partial
 * records joined), `sinceMs` drops older records, `limitBytes` cuts the rendered output, and
 * `follow` keeps reading as the file grows until its writer is gone.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { type LogRecord, parseRecord, renderRecord } from "./cri-log-format.ts";

export interface LogQuery {
  tailLines?: number;
  sinceMs?: number;
  timestamps: boolean;
  limitBytes?: number;
}

/** Complete records of `text` (a trailing line without newline is not yet complete). */
export function parseRecords(text: string): { records: LogRecord[]; consumed: number } {
  const records: LogRecord[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) break;
    const r = parseRecord(text.slice(start, nl));
    if (r) records.push(r);
    start = nl + 1;
  }
  return { records, consumed: Buffer.byteLength(text.slice(0, start)) };
}

/** The records `tailLines` and `sinceMs` keep, in order. */
export function selectRecords(records: LogRecord[], q: Pick<LogQuery, "tailLines" | "sinceMs">): LogRecord[] {
  let out = q.sinceMs === undefined ? records : records.filter((r) => r.timeMs >= q.sinceMs!);
  if (q.tailLines !== undefined) {
    if (q.tailLines <= 0) return [];
    let lines = 0;
    let i = out.length;
    // Walk back over logical lines: a line ends at a full record, partial ones before it belong to it.
    while (i > 0) {
      const r = out[i - 1]!;
      if (!r.partial) {
        if (lines === q.tailLines) break;
        lines++;
      }
      i--;
    }
    out = out.slice(i);
  }
  return out;
}

/** Renders records, stopping at `budget` bytes; returns the text and the bytes left. */
export function renderRecords(
  records: LogRecord[],
  timestamps: boolean,
  budget = Infinity,
): { text: string; budget: number } {
  let text = "";
  let left = budget;
  for (const r of records) {
    if (left <= 0) break;
    let piece = renderRecord(r, timestamps);
    const size = Buffer.byteLength(piece);
    if (size > left) piece = Buffer.from(piece).subarray(0, left).toString("utf8");
    text += piece;
    left -= Math.min(size, left);
  }
  return { text, budget: left };
}

function readFrom(file: string, offset: number): string {
  if (!existsSync(file)) return "";
  const size = statSync(file).size;
  if (size <= offset) return "";
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(size - offset);
    const n = readSync(fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Streams `file` as kubelet does: the selected backlog first, then (with `isLive`) new records
 * as they are appended until `isLive()` turns false and the file is drained, or `signal` aborts.
 */
export async function* streamLog(
  file: string,
  q: LogQuery,
  isLive?: () => boolean,
  signal?: AbortSignal,
  pollMs = 100,
): AsyncGenerator<string> {
  let { records, consumed } = parseRecords(readFrom(file, 0));
  let offset = consumed;
  let budget = q.limitBytes ?? Infinity;
  const first = renderRecords(selectRecords(records, q), q.timestamps, budget);
  budget = first.budget;
  if (first.text) yield first.text;
  while (isLive && budget > 0 && !signal?.aborted) {
    const live = isLive();
    const text = readFrom(file, offset);
    ({ records, consumed } = parseRecords(text));
    offset += consumed;
    const kept = q.sinceMs === undefined ? records : selectRecords(records, { sinceMs: q.sinceMs });
    const out = renderRecords(kept, q.timestamps, budget);
    budget = out.budget;
    if (out.text) yield out.text;
    if (!live && consumed === 0) return;
    if (consumed === 0) await Bun.sleep(pollMs);
  }
}
