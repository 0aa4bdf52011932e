/**
 * Splits a streamed HTTP body into text lines as they arrive: watch streams (one JSON event a
 * line) and pod logs read it the same way. The reader is cancelled when the consumer stops.
 */

export interface TextLinesOptions {
  /**
   * Drop a last line the stream ends without a newline. A watch event always ends in one, so an
   * unterminated tail is a cut connection's fragment; a log's last line may simply lack one.
   */
  dropUnterminated?: boolean;
}

export async function* textLines(
  body: ReadableStream<Uint8Array>,
  opts: TextLinesOptions = {},
): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        yield buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf("\n");
      }
    }
    buf += decoder.decode();
    if (buf && !opts.dropUnterminated) yield buf;
  } finally {
    reader.cancel().catch(() => {});
  }
}
