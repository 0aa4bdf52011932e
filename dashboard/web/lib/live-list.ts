/**
 * A live collection from `/api/namespaces/:ns/watch/:kind`: the snapshot (its first page, then
 * the appended rest), then each change,
 * held in signals (@preact/signals) so only the views that read them re-render. Changes that
 * arrive together are applied together, once per animation frame. A stream that ends without
 * an error (a restart, a network blip) is reopened after a second; an error is kept for the view.
 */
import { type Signal, signal } from "@preact/signals";
import { useEffect, useMemo } from "preact/hooks";
import type { ApiError } from "../../shared/types.ts";
import { openStream, RequestFailed } from "./api.ts";

export interface LiveList<T> {
  /** The items, replaced (a new array) whenever something changed. */
  items: Signal<T[]>;
  error: Signal<RequestFailed | undefined>;
  /** The first snapshot arrived. */
  ready: Signal<boolean>;
}

interface Change<T> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  key: string;
  item: T;
}

export function applyChange<T>(map: Map<string, T>, c: Change<T>): void {
  if (c.type === "DELETED") map.delete(c.key);
  else map.set(c.key, c.item);
}

export function useLiveList<T>(url: string | null): LiveList<T> {
  const state = useMemo<LiveList<T>>(
    () => ({ items: signal<T[]>([]), error: signal(undefined), ready: signal(false) }),
    [url],
  );
  useEffect(() => {
    if (!url) return;
    const map = new Map<string, T>();
    let frame = 0;
    let closed = false;
    let close = () => {};
    const flush = () => {
      frame = 0;
      state.items.value = [...map.values()];
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(flush);
    };
    const open = () => {
      close = openStream(url, {
        onEvent(event, data) {
          if (event === "snapshot") {
            map.clear();
            for (const { key, item } of (data as { items: { key: string; item: T }[] }).items)
              map.set(key, item);
            state.error.value = undefined;
            if (frame) cancelAnimationFrame(frame);
            flush();
            state.ready.value = true;
          } else if (event === "append") {
            for (const { key, item } of (data as { items: { key: string; item: T }[] }).items)
              map.set(key, item);
            schedule();
          } else if (event === "change") {
            applyChange(map, data as Change<T>);
            schedule();
          } else if (event === "error") {
            state.error.value = new RequestFailed(data as ApiError);
          }
        },
        onError(e) {
          state.error.value = e;
          state.ready.value = true;
        },
        onEnd() {
          if (!closed) setTimeout(() => !closed && open(), 1000);
        },
      });
    };
    open();
    return () => {
      closed = true;
      close();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [state]);
  return state;
}
