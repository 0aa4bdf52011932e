/**
 * The frame format between the server and a python function worker: an 8-byte header (two
 * big-endian uint32: the JSON header's length, the body's length), the JSON header, the body. One
 * frame per request and per reply; the body travels as raw bytes, never in JSON.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface Frame {
  header: Record<string, unknown>;
  body: Uint8Array;
}

export function encodeFrame(header: unknown, body: Uint8Array): Uint8Array {
  const json = encoder.encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, json.length);
  view.setUint32(4, body.length);
  out.set(json, 8);
  out.set(body, 8 + json.length);
  return out;
}

/** Collects chunks from a pipe and cuts them into frames. */
export class FrameReader {
  private buffer: Uint8Array = new Uint8Array(0);

  /** Adds a chunk; returns the frames it completed (usually zero or one). */
  push(chunk: Uint8Array): Frame[] {
    this.buffer = this.buffer.length === 0 ? chunk : concat(this.buffer, chunk);
    const frames: Frame[] = [];
    for (;;) {
      const buf = this.buffer;
      if (buf.length < 8) break;
      const view = new DataView(buf.buffer, buf.byteOffset, 8);
      const headerLength = view.getUint32(0);
      const bodyLength = view.getUint32(4);
      const end = 8 + headerLength + bodyLength;
      if (buf.length < end) break;
      const header = JSON.parse(decoder.decode(buf.subarray(8, 8 + headerLength))) as Record<string, unknown>;
      // slice: the body must not pin (or alias) the rest of the read buffer.
      frames.push({ header, body: buf.slice(8 + headerLength, end) });
      this.buffer = buf.subarray(end);
    }
    return frames;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
