/**
 * Waits on one object by watching it: one GET, then a watch from its resourceVersion, GET and
 * watch again when the server ends the stream or the version expired. Nothing here polls. The
 * Run and WorkflowRun waits differ only in what ends the wait and how they word their errors.
 */
import {
  isGone,
  type KubeClient,
  type KubeObject,
  path,
  type ResourceRef,
  watchStream,
} from "@kruntimes/kube";
import { CliError } from "./errors.ts";
import { ExitCode } from "./exit-codes.ts";

export interface WatchUntil<T> {
  /** The object's GET, to word its 404; default: a plain GET. */
  get?(): Promise<T>;
  /** The kind in the "was deleted" error: `run`, `workflowrun`. */
  noun: string;
  /** Sees every version (the GETs' and each watch event's); true ends the wait. */
  done(obj: T): boolean;
  /** Give up after this many milliseconds with `timeoutError`; default: wait forever. */
  timeoutMs?: number;
  /** The error of a timeout, given the last version seen. */
  timeoutError(last: T | undefined): CliError;
}

export async function watchUntil<T extends KubeObject>(
  client: KubeClient,
  resource: Omit<ResourceRef, "namespace" | "name">,
  namespace: string,
  name: string,
  w: WatchUntil<T>,
): Promise<T> {
  const get = w.get ?? (() => client.get<T>(path(resource, namespace, name)));
  const abort = new AbortController();
  let timedOut = false;
  let last: T | undefined;
  const timer =
    w.timeoutMs !== undefined
      ? setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, w.timeoutMs)
      : undefined;
  const seen = (obj: T) => {
    last = obj;
    return w.done(obj);
  };
  try {
    for (;;) {
      const obj = await get();
      if (seen(obj)) return obj;
      try {
        for await (const ev of watchStream<T>(
          client,
          path(resource, namespace),
          { fieldSelector: `metadata.name=${name}`, resourceVersion: obj.metadata.resourceVersion },
          abort.signal,
        )) {
          if (ev.type === "BOOKMARK") continue;
          if (ev.type === "DELETED")
            throw new CliError(ExitCode.NotFound, `${w.noun} "${name}" was deleted while waiting for it`);
          if (seen(ev.object)) return ev.object;
        }
      } catch (e) {
        if (!isGone(e)) throw e;
      }
      // The server closed the stream (its watch timeout) or the resourceVersion expired: GET again.
    }
  } catch (e) {
    if (timedOut) throw w.timeoutError(last);
    throw e;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
