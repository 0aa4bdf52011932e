/** One watch stream: newline-delimited JSON events read from a chunked response. */
import type { KubeClient, KubeObject, RequestOptions } from "./client.ts";
import { KubeError } from "./errors.ts";

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
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) {
          const ev = JSON.parse(line) as WatchEvent<T>;
          if (ev.type === "ERROR") {
            const st = ev.object as unknown as { code?: number; message?: string; reason?: string };
            throw new KubeError("WATCH", path, st.code ?? 500, st);
          }
          yield ev;
        }
        nl = buf.indexOf("\n");
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
