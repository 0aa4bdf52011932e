/** One watch stream: newline-delimited JSON events read from a chunked response. */
import type { KubeClient, KubeObject, RequestOptions } from "./client.ts";
import { KubeError } from "./errors.ts";
import { textLines } from "./text-lines.ts";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/**
 * Events of one watch. `headersTimeoutMs` bounds the wait for the response headers (the
 * apiserver sends them as soon as the watch is established): a connection that accepts the
 * request and never answers fails then instead of hanging the caller forever.
 */
export async function* watchStream<T extends KubeObject>(
  client: KubeClient,
  path: string,
  query: RequestOptions["query"],
  signal?: AbortSignal,
  headersTimeoutMs = 0,
): AsyncGenerator<WatchEvent<T>> {
  const opening = new AbortController();
  const timer =
    headersTimeoutMs > 0
      ? setTimeout(
          () =>
            opening.abort(
              new Error(`no watch response from the apiserver in ${headersTimeoutMs} ms: ${path}`),
            ),
          headersTimeoutMs,
        )
      : undefined;
  let res: Response;
  try {
    res = await client.request<Response>("GET", path, {
      query: { ...query, watch: 1, allowWatchBookmarks: true },
      signal: signal ? AbortSignal.any([signal, opening.signal]) : opening.signal,
      raw: true,
    });
  } finally {
    clearTimeout(timer);
  }
  if (!res.body) return;
  for await (const line of textLines(res.body, { dropUnterminated: true })) {
    if (!line.trim()) continue;
    const ev = JSON.parse(line) as WatchEvent<T>;
    if (ev.type === "ERROR") {
      const st = ev.object as unknown as { code?: number; message?: string; reason?: string };
      throw new KubeError("WATCH", path, st.code ?? 500, st);
    }
    yield ev;
  }
}
