/**
 * TailBuffer keeps the last bytes of one output stream. The full stream flows to subscribers as
 * output events; this is what TaskExited carries, bounded to `limit` bytes including the
 * truncation marker.
 */

export interface Tail {
  data: Uint8Array;
  truncated: boolean;
  total: number;
}

const encoder = new TextEncoder();

export function truncationMarker(dropped: number): string {
  return `[... ${dropped} bytes truncated ...]\n`;
}

/** Index of the first byte at or after `from` that does not continue a UTF-8 sequence (≤3 skipped). */
function utf8Start(bytes: Uint8Array, from: number): number {
  let i = from;
  while (i < bytes.length && i < from + 3 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i++;
  return i;
}

export class TailBuffer {
  private chunks: Uint8Array[] = [];
  private retained = 0;
  total = 0;

  constructor(readonly limit: number) {}

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.retained += chunk.length;
    while (this.chunks.length > 1 && this.retained - this.chunks[0]!.length >= this.limit) {
      this.retained -= this.chunks.shift()!.length;
    }
  }

  /** The last min(total, limit) bytes as they were written, and their offset in the stream. */
  raw(): { data: Uint8Array; offset: number } {
    const all = concat(this.chunks, this.retained);
    const data = all.length > this.limit ? all.subarray(all.length - this.limit) : all;
    return { data, offset: this.total - data.length };
  }

  /** The tail for TaskExited: raw bytes when they fit, else marker + the newest bytes. */
  snapshot(): Tail {
    const { data } = this.raw();
    if (this.total <= this.limit) return { data, truncated: false, total: this.total };
    // The marker is sized for the largest possible count, so the result never exceeds the limit.
    const room = this.limit - encoder.encode(truncationMarker(this.total)).length;
    if (room <= 0) {
      return {
        data: encoder.encode(truncationMarker(this.total)).subarray(0, this.limit),
        truncated: true,
        total: this.total,
      };
    }
    const kept = data.subarray(utf8Start(data, data.length - room));
    const marker = encoder.encode(truncationMarker(this.total - kept.length));
    const out = new Uint8Array(marker.length + kept.length);
    out.set(marker, 0);
    out.set(kept, marker.length);
    return { data: out, truncated: true, total: this.total };
  }
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
