/** One watch stream: newline-delimited JSON events read from a chunked response. */
import type { KubeClient, KubeObject, RequestOptions } from "./client.ts";
import { KubeError } from "./errors.ts";
import { textLines } from "./text-lines.ts";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export async function* watchStream<T extends KubeObject>(
  client: KubeClient,
  path: string,
  query: RequestOptions["query"],
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent<T>> {
  const res = await client.request<Response>("GET", path, {
    query: { ...query, watch: 1, allowWatchBookmarks: true },
    signal,
    raw: true,
  });
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
