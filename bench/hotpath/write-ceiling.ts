/**
 * Baseline (a): the apiserver's write ceiling for this client — trivial ConfigMap creates, each
 * followed by a patch (the shape of a Run's create + status writes), with the same concurrency.
 * Runs/s can at best be ceiling ÷ writes per Run.
 */
import { type KubeClient, path, R } from "@kruntimes/kube";
import { inParallel } from "./pool-limit.ts";
import { BENCH_LABEL } from "./run-scenario.ts";

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
}

export async function measureWriteCeiling(
  client: KubeClient,
  namespace: string,
  objects: number,
  concurrency: number,
  signal: AbortSignal,
): Promise<WriteCeiling> {
  const at = path(R.configMaps, namespace);
  const started = performance.now();
  await inParallel(
    objects,
    concurrency,
    async (i) => {
      const name = `ceiling-${i}`;
      await client.create(at, { metadata: { name, labels: { [BENCH_LABEL]: "ceiling" } }, data: { v: "0" } });
      await client.patch(path(R.configMaps, namespace, name), { data: { v: "1" } }, "merge");
    },
    signal,
  );
  const seconds = (performance.now() - started) / 1000;
  await client.delete(at, undefined, { labelSelector: `${BENCH_LABEL}=ceiling` }).catch(() => {});
  const writes = objects * 2;
  const writesPerSecond = writes / seconds;
  return {
    objects,
    writes,
    concurrency,
    seconds,
    writesPerSecond,
    idealRunsPerSecond: writesPerSecond / WRITES_PER_RUN,
  };
}
