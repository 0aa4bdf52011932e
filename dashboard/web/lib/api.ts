/**
 * The browser's side of the dashboard API: JSON requests and streams, each carrying the
 * signed-in token (sessionStorage only: gone when the tab closes; never in a cookie or a URL).
 */
import type { ApiError } from "../../shared/types.ts";
import { SseParser } from "./sse-parser.ts";

const TOKEN_KEY = "kruntimes.dashboard.token";

export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (t: string) => sessionStorage.setItem(TOKEN_KEY, t),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class RequestFailed extends Error {
  override name = "RequestFailed";
  constructor(readonly error: ApiError) {
    super(error.message);
  }
  get status() {
    return this.error.status;
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const t = tokenStore.get();
  return t ? { ...extra, authorization: `Bearer ${t}` } : extra;
}

async function failure(res: Response): Promise<RequestFailed> {
  const text = await res.text();
  try {
    return new RequestFailed(JSON.parse(text) as ApiError);
  } catch {
    return new RequestFailed({ status: res.status, reason: "Unknown", message: text || res.statusText });
  }
}

export async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { headers: headers(), signal });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

export async function post(url: string, body: string, contentType: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    body,
    headers: headers({ "content-type": contentType, "x-requested-by": "kruntimes-dashboard" }),
  });
}

/** Fetches with the token and saves the body as a file (an <a href> cannot send the header). */
export async function download(url: string, fallbackName: string): Promise<void> {
  const res = await fetch(url, { headers: headers() });
  if (!res.ok) throw await failure(res);
  const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? fallbackName;
  const href = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = href;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

export interface StreamHandlers {
  onEvent(event: string, data: unknown): void;
  /** The request failed (HTTP error) or the stream broke. */
  onError(e: RequestFailed): void;
  onEnd?(): void;
}

/** Opens an SSE stream; the returned function closes it. */
export function openStream(url: string, h: StreamHandlers): () => void {
  const abort = new AbortController();
  (async () => {
    let res: Response;
    try {
      res = await fetch(url, { headers: headers({ accept: "text/event-stream" }), signal: abort.signal });
    } catch (e) {
      if (!abort.signal.aborted)
        h.onError(
          new RequestFailed({
            status: 0,
            reason: "Unavailable",
            message: `cannot reach the dashboard: ${e}`,
          }),
        );
      return;
    }
    if (!res.ok || !res.body) {
      h.onError(await failure(res));
      return;
    }
    const parser = new SseParser();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const m of parser.push(value)) h.onEvent(m.event, JSON.parse(m.data));
      }
      h.onEnd?.();
    } catch (e) {
      if (!abort.signal.aborted)
        h.onError(new RequestFailed({ status: 0, reason: "Unavailable", message: `the stream broke: ${e}` }));
    }
  })();
  return () => abort.abort();
}
