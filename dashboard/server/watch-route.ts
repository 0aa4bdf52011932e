/**
 * `GET /api/namespaces/:ns/watch/:kind`: a list, then a watch from its resourceVersion, as
 * Server-Sent Events — `snapshot` {items: [{key, item}], resourceVersion, complete} with the first
 * page (500 items), `append` {items, complete} for each further page, then `change` {type, key,
 * item} per watch event; a new `snapshot` after a relist (410 Gone), `error` {ApiError} before it ends.
 * The list happens before the response starts, so a 403 is an HTTP 403 the view can explain.
 * Every request uses the caller's own client; closing the stream aborts the watch.
 */
import {
  Labels,
  type Run,
  RunResource,
  type Runtime,
  RuntimeResource,
  type WorkflowRun,
  WorkflowRunResource,
} from "@kruntimes/api";
import { isGone, type KubeClient, type KubeObject, path, R, watchStream } from "@kruntimes/kube";
import type { WatchKind } from "../shared/types.ts";
import type { Callers } from "./callers.ts";
import { DashboardError } from "./errors.ts";
import type { Metrics } from "./metrics.ts";
import { sseResponse } from "./sse.ts";
import {
  eventSummary,
  type KubeEvent,
  type KubePod,
  podSummary,
  runSummary,
  runtimeSummary,
  workflowRunSummary,
} from "./summaries.ts";

interface KindDef {
  path(ns: string): string;
  /** Selectors for this request, from its query (validated here, enforced by the apiserver). */
  query(q: URLSearchParams): Record<string, string | undefined>;
  map(o: KubeObject): unknown;
  /** The request in words, for "you may not …". */
  what(ns: string): string;
}

const nameOf = (q: URLSearchParams) => {
  const name = q.get("name");
  if (!name) throw new DashboardError(400, "BadRequest", "this stream needs ?name=<run>");
  return name;
};

const selectors = (q: URLSearchParams) => ({
  labelSelector: q.get("labelSelector") || undefined,
  fieldSelector: q.get("fieldSelector") || undefined,
});

export const KINDS: Record<WatchKind, KindDef> = {
  runs: {
    path: (ns) => path(RunResource, ns),
    query: selectors,
    map: (o) => runSummary(o as Run),
    what: (ns) => `list runs in namespace ${ns}`,
  },
  run: {
    path: (ns) => path(RunResource, ns),
    query: (q) => ({ fieldSelector: `metadata.name=${nameOf(q)}` }),
    map: (o) => o,
    what: (ns) => `get runs in namespace ${ns}`,
  },
  runtimes: {
    path: (ns) => path(RuntimeResource, ns),
    query: () => ({}),
    map: (o) => runtimeSummary(o as Runtime),
    what: (ns) => `list runtimes in namespace ${ns}`,
  },
  pods: {
    path: (ns) => path(R.pods, ns),
    query: () => ({ labelSelector: Labels.runtime }),
    map: (o) => podSummary(o as KubePod, Labels.runtime),
    what: (ns) => `list pods in namespace ${ns}`,
  },
  workflowruns: {
    path: (ns) => path(WorkflowRunResource, ns),
    query: selectors,
    map: (o) => workflowRunSummary(o as WorkflowRun),
    what: (ns) => `list workflowruns in namespace ${ns}`,
  },
  workflowrun: {
    path: (ns) => path(WorkflowRunResource, ns),
    query: (q) => ({ fieldSelector: `metadata.name=${nameOf(q)}` }),
    map: (o) => o,
    what: (ns) => `get workflowruns in namespace ${ns}`,
  },
  events: {
    path: (ns) => path(R.events, ns),
    query: (q) => ({ fieldSelector: `involvedObject.name=${nameOf(q)},involvedObject.kind=Run` }),
    map: (o) => eventSummary(o as KubeEvent),
    what: (ns) => `list events in namespace ${ns}`,
  },
};

/** Items per list page: the first page is on screen while the rest is read. */
const PAGE = 500;

const keyOf = (o: KubeObject) => o.metadata.uid ?? o.metadata.name ?? "";

export async function watchRoute(
  callers: Callers,
  metrics: Metrics,
  request: Request,
  namespace: string,
  kind: string,
): Promise<Response> {
  const def = (KINDS as Record<string, KindDef | undefined>)[kind];
  if (!def)
    throw new DashboardError(
      404,
      "NotFound",
      `no stream "${kind}"; streams: ${Object.keys(KINDS).join(", ")}`,
    );
  const query = def.query(new URL(request.url).searchParams);
  const abort = new AbortController();
  const { client } = callers.of(request, abort.signal);
  const p = def.path(namespace);
  /** One page of the list; `continue` pages share the first page's resourceVersion. */
  const page = async (cont?: string) => {
    try {
      return await client.list<KubeObject>(p, { ...query, limit: PAGE, continue: cont });
    } catch (e) {
      throw DashboardError.from(e, def.what(namespace));
    }
  };
  let first: Awaited<ReturnType<typeof page>>;
  try {
    first = await page();
  } catch (e) {
    abort.abort();
    throw e;
  }
  metrics.streams.inc({ kind });
  const rows = (items: KubeObject[]) => items.map((o) => ({ key: keyOf(o), item: def.map(o) }));
  return sseResponse(
    request,
    async (sse) => {
      let current = first;
      for (;;) {
        // The first page paints at once; the rest follow as `append` before the watch starts.
        const rv = current.metadata.resourceVersion;
        sse.send("snapshot", {
          items: rows(current.items),
          resourceVersion: rv,
          complete: !current.metadata.continue,
        });
        try {
          for (let cont = current.metadata.continue; cont; ) {
            const next = await page(cont);
            sse.send("append", { items: rows(next.items), complete: !next.metadata.continue });
            cont = next.metadata.continue;
          }
        } catch (e) {
          if (abort.signal.aborted) return;
          // A continue token that expired (410) lists again from the start.
          if (!(e instanceof DashboardError && e.status === 410)) {
            sse.send("error", DashboardError.from(e).toJSON());
            return;
          }
        }
        const ended = await follow(client, p, query, rv, def, sse, abort.signal);
        if (abort.signal.aborted) return;
        if (ended === "error") return;
        try {
          current = await page();
        } catch (e) {
          sse.send("error", DashboardError.from(e).toJSON());
          return;
        }
      }
    },
    () => {
      abort.abort();
      metrics.streams.dec({ kind });
    },
  );
}

/** Follows one watch until it expires (relist) or fails (error sent). Re-watches when the server ends it. */
async function follow(
  client: KubeClient,
  p: string,
  query: Record<string, string | undefined>,
  resourceVersion: string | undefined,
  def: KindDef,
  sse: { send(event: string, data: unknown): void },
  signal: AbortSignal,
): Promise<"relist" | "error"> {
  let rv = resourceVersion;
  for (;;) {
    try {
      for await (const ev of watchStream<KubeObject>(client, p, { ...query, resourceVersion: rv }, signal)) {
        rv = ev.object.metadata.resourceVersion ?? rv;
        if (ev.type === "BOOKMARK") continue;
        sse.send("change", { type: ev.type, key: keyOf(ev.object), item: def.map(ev.object) });
      }
    } catch (e) {
      if (signal.aborted) return "error";
      if (isGone(e)) return "relist";
      sse.send("error", DashboardError.from(e).toJSON());
      return "error";
    }
  }
}
