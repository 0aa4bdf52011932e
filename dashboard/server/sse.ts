/**
 * Server-Sent Events over a streamed Response: `event: <name>` + one JSON `data:` line per
 * message, a comment every 15 s so proxies keep the connection open, and an AbortSignal that
 * fires when the browser goes away (or the stream is closed) so the watches behind it stop.
 */

const HEARTBEAT_MS = 15_000;

export interface SseStream {
  send(event: string, data: unknown): void;
  close(): void;
  /** Aborted when the client disconnects or `close()` is called. */
  readonly signal: AbortSignal;
}

/** Starts a stream; `run` writes to it and the stream closes when `run` settles. */
export function sseResponse(
  request: Request,
  run: (sse: SseStream) => Promise<void>,
  onClose?: () => void,
): Response {
  const abort = new AbortController();
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let closed = false;
  const write = (text: string) => {
    if (closed || !controller) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      close();
    }
  };
  const heartbeat = setInterval(() => write(": keep-alive\n\n"), HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    abort.abort();
    try {
      controller?.close();
    } catch {}
    onClose?.();
  };
  request.signal.addEventListener("abort", close, { once: true });
  const sse: SseStream = {
    send: (event, data) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
    close,
    signal: abort.signal,
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      write(": open\n\n");
      run(sse).finally(close);
    },
    cancel: close,
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}
