/**
 * Bounded text for tool results: an MCP result goes into a model's context, so no command output,
 * file or response body is passed on whole. Outputs keep their head and tail (an error is usually
 * at the end, the command's first lines say what it was doing); files keep a prefix the caller can
 * continue from with an offset. Every cut says where it is and how many bytes there were.
 */

/** Keeps the first and last `limit / 2` bytes of a stream of chunks, counting all of them. */
export class HeadTail {
  private readonly headMax: number;
  private readonly tailMax: number;
  private head: Uint8Array[] = [];
  private headLen = 0;
  /** The newest bytes past the head, at most `tailMax` of them (older chunks dropped whole or cut). */
  private tail: Uint8Array[] = [];
  private tailLen = 0;
  total = 0;

  constructor(readonly limit: number) {
    this.headMax = Math.ceil(limit / 2);
    this.tailMax = limit - this.headMax;
  }

  push(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    let rest = chunk;
    if (this.headLen < this.headMax) {
      const n = Math.min(this.headMax - this.headLen, rest.byteLength);
      this.head.push(rest.slice(0, n));
      this.headLen += n;
      rest = rest.subarray(n);
    }
    if (rest.byteLength === 0 || this.tailMax === 0) return;
    if (rest.byteLength >= this.tailMax) {
      this.tail = [rest.slice(rest.byteLength - this.tailMax)];
      this.tailLen = this.tailMax;
      return;
    }
    this.tail.push(rest.slice());
    this.tailLen += rest.byteLength;
    while (this.tailLen > this.tailMax) {
      const first = this.tail[0] as Uint8Array;
      const over = this.tailLen - this.tailMax;
      if (first.byteLength <= over) {
        this.tail.shift();
        this.tailLen -= first.byteLength;
      } else {
        this.tail[0] = first.subarray(over);
        this.tailLen -= over;
      }
    }
  }

  get truncated(): boolean {
    return this.total > this.limit;
  }

  /** The text kept; when bytes were dropped, a marker line between head and tail says how many. */
  text(): string {
    const head = concat(this.head, this.headLen);
    const tail = concat(this.tail, this.tailLen);
    if (!this.truncated) return decodeLoose(concat([head, tail], head.byteLength + tail.byteLength));
    const shownHead = utf8Prefix(head);
    const shownTail = utf8Suffix(tail);
    const dropped = this.total - shownHead.byteLength - shownTail.byteLength;
    return `${decodeLoose(shownHead)}${omittedMarker(dropped, this.total)}${decodeLoose(shownTail)}`;
  }
}

export function omittedMarker(dropped: number, total: number): string {
  return `\n[… ${dropped} bytes omitted by krt mcp (${total} bytes in all; only the first and last are kept) …]\n`;
}

/** Text cut to at most `limit` bytes of UTF-8, with the same marker when it was cut. */
export function boundText(text: string, limit: number): { text: string; bytes: number; truncated: boolean } {
  const bytes = new TextEncoder().encode(text);
  const h = new HeadTail(limit);
  h.push(bytes);
  return { text: h.text(), bytes: bytes.byteLength, truncated: h.truncated };
}

/** Bytes as text when they are UTF-8, else base64; a prefix cut inside a character is trimmed to it. */
export function encodeContent(
  bytes: Uint8Array,
  cut: boolean,
): { content: string; encoding: "utf-8" | "base64"; bytes: number } {
  const whole = cut ? utf8Prefix(bytes) : bytes;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(whole);
    return { content: text, encoding: "utf-8", bytes: whole.byteLength };
  } catch {
    return { content: Buffer.from(bytes).toString("base64"), encoding: "base64", bytes: bytes.byteLength };
  }
}

/** The longest prefix that does not end inside a UTF-8 sequence. */
export function utf8Prefix(b: Uint8Array): Uint8Array {
  // Look back at most 3 bytes for the lead byte of the last sequence.
  for (let back = 1; back <= Math.min(4, b.byteLength); back++) {
    const byte = b[b.byteLength - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? b.subarray(0, b.byteLength - back) : b;
  }
  return b;
}

/** Drops continuation bytes at the start (a sequence whose lead byte was cut off). */
export function utf8Suffix(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < Math.min(3, b.byteLength) && ((b[i] as number) & 0xc0) === 0x80) i++;
  return b.subarray(i);
}

function decodeLoose(b: Uint8Array): string {
  return new TextDecoder("utf-8").decode(b);
}

function concat(parts: Uint8Array[], len: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(len);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
