/**
 * Reads the output records of one Run from the `runtimed` container log of one pod, through the
 * apiserver (`GET …/pods/<pod>/log?container=runtimed`), optionally following it live.
 */
import { RUNTIMED_CONTAINER } from "@kruntimes/api";
import { type KubeClient, path, R, textLines } from "@kruntimes/kube";
import { matches, type OutputFilter, type OutputLine, parseOutputLine } from "./output-line.ts";

export interface PodLogQuery {
  namespace: string;
  pod: string;
  follow: boolean;
  /** RFC 3339; only log lines written at or after it. */
  sinceTime?: string;
  signal?: AbortSignal;
}

export async function* podOutput(
  client: KubeClient,
  q: PodLogQuery,
  filter: OutputFilter,
): AsyncGenerator<OutputLine> {
  const res = await client.request<Response>("GET", path(R.pods, q.namespace, q.pod, "log"), {
    query: { container: RUNTIMED_CONTAINER, follow: q.follow || undefined, sinceTime: q.sinceTime },
    signal: q.signal,
    raw: true,
  });
  if (!res.body) return;
  for await (const text of textLines(res.body)) {
    const o = parseOutputLine(text);
    if (o && matches(o, filter)) yield o;
  }
}

/** One second before the Run was created (creationTimestamp has 1 s precision): where its output can start. */
export function sinceCreation(creationTimestamp: string | undefined): string | undefined {
  if (!creationTimestamp) return undefined;
  const t = Date.parse(creationTimestamp);
  return Number.isNaN(t) ? undefined : new Date(t - 1000).toISOString().replace(/\.\d+Z$/, "Z");
}
