/**
 * Baseline (a): the apiserver's write ceiling for this client — trivial ConfigMap creates, each
 * followed by a patch (the shape of a Run's create + status writes), with the same concurrency.
 * Runs/s can at best be ceiling ÷ writes per Run. A watch on the ConfigMaps times one write plus
 * one watch hop (create sent → ADDED event seen): the hot path is three such hops.
 */
import { type KubeClient, type KubeObject, path, R } from "@kruntimes/kube";
import { DoneCollector } from "./collector.ts";
import { inParallel } from "./pool-limit.ts";
import { BENCH_LABEL } from "./run-scenario.ts";
import { type Summary, summarize } from "./stats.ts";

/** create, bind, finish: the writes one Run costs on the hot path. */
export const WRITES_PER_RUN = 3;

export interface WriteCeiling {
  objects: number;
  writes: number;
  concurrency: number;
  seconds: number;
  writesPerSecond: number;
  /** writesPerSecond ÷ WRITES_PER_RUN. */
  idealRunsPerSecond: number;
  /** create sent → response, ms. */
  createLatency: Summary;
  /** create sent → ADDED watch event seen, ms: one write and one watch hop. */
  watchHop: Summary;
}

export async function measureWriteCeiling(
  client: KubeClient,
  namespace: string,
  objects: number,
  concurrency: number,
  nowMicros: () => number,
  signal: AbortSignal,
): Promise<WriteCeiling> {
  const at = path(R.configMaps, namespace);
  const selector = `${BENCH_LABEL}=ceiling`;
  const added = new DoneCollector<KubeObject>(client, at, selector, () => true, nowMicros);
  await added.start();
  const sent = new Map<string, number>();
  const createMs: number[] = [];
  const started = performance.now();
  try {
    await inParallel(
      objects,
      concurrency,
      async (i) => {
        const name = `ceiling-${i}`;
        const t0 = nowMicros();
        sent.set(name, t0);
        await client.create(at, {
          metadata: { name, labels: { [BENCH_LABEL]: "ceiling" } },
          data: { v: "0" },
        });
        createMs.push((nowMicros() - t0) / 1000);
        await client.patch(path(R.configMaps, namespace, name), { data: { v: "1" } }, "merge");
      },
      signal,
    );
    await added.waitFor(objects, AbortSignal.any([signal, AbortSignal.timeout(30_000)]));
  } finally {
    await added.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const hopMs = [...added.done].map(([name, s]) => (s.seenMicros - (sent.get(name) ?? s.seenMicros)) / 1000);
  await client.delete(at, undefined, { labelSelector: selector }).catch(() => {});
  const writes = objects * 2;
  const writesPerSecond = writes / seconds;
  return {
    objects,
    writes,
    concurrency,
    seconds,
    writesPerSecond,
    idealRunsPerSecond: writesPerSecond / WRITES_PER_RUN,
    createLatency: summarize(createMs),
    watchHop: summarize(hopMs),
  };
}
