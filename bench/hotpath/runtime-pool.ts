/** The warm pool a scenario runs on: one Runtime, created for the benchmark and awaited by watch until every pod is available. */
import { API_VERSION, RUNTIME_CONTAINER, RUNTIME_KIND, type Runtime, RuntimeResource } from "@kruntimes/api";
import { isGone, type KubeClient, path, watchStream } from "@kruntimes/kube";
import { BenchError } from "./bench-error.ts";

/** Label on everything the benchmark creates: the step it belongs to. */
export const BENCH_LABEL = "kruntimes.io/bench";

export interface PoolSpec {
  namespace: string;
  name: string;
  image: string;
  pods: number;
  slotsPerPod: number;
}

export async function createPool(client: KubeClient, p: PoolSpec): Promise<void> {
  await client.create<Runtime>(path(RuntimeResource, p.namespace), {
    apiVersion: API_VERSION,
    kind: RUNTIME_KIND,
    metadata: { name: p.name, labels: { [BENCH_LABEL]: p.name } },
    spec: {
      replicas: p.pods,
      capacity: { runs: p.slotsPerPod },
      template: { spec: { containers: [{ name: RUNTIME_CONTAINER, image: p.image }] } },
    },
  });
}

/** Every pod ready and available to the scheduler. */
export function poolReady(rt: Runtime, pods: number): boolean {
  const s = rt.status ?? {};
  const ready = s.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  return ready && (s.readyReplicas ?? 0) >= pods && (s.availableReplicas ?? 0) >= pods;
}

export function describePool(rt: Runtime | undefined): string {
  const s = rt?.status ?? {};
  return `${s.readyReplicas ?? 0} ready, ${s.availableReplicas ?? 0} available of ${rt?.spec.replicas ?? "?"}`;
}

/** Resolves once the pool is ready; throws after `timeoutMs` with the pool's last status. */
export async function waitPoolReady(
  client: KubeClient,
  p: PoolSpec,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const done = new AbortController();
  // AbortSignal.any also sees an interrupt that came before this call (e.g. during createPool's
  // POST); a listener added now would not, and the watch would then run until the timeout.
  const stop = AbortSignal.any([signal, done.signal, AbortSignal.timeout(timeoutMs)]);
  let last: Runtime | undefined;
  try {
    for (;;) {
      // A watch ends quietly when aborted (interrupt or timeout): stop here, or the loop would
      // re-list and re-watch with an aborted signal forever.
      if (stop.aborted) throw signal.aborted ? signal.reason : new Error("timed out");
      last = await client.get<Runtime>(path(RuntimeResource, p.namespace, p.name));
      if (poolReady(last, p.pods)) return;
      try {
        for await (const ev of watchStream<Runtime>(
          client,
          path(RuntimeResource, p.namespace),
          { fieldSelector: `metadata.name=${p.name}`, resourceVersion: last.metadata.resourceVersion },
          stop,
        )) {
          if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
          last = ev.object;
          if (poolReady(last, p.pods)) return;
        }
      } catch (e) {
        if (!isGone(e)) throw e;
      }
    }
  } catch (e) {
    if (stop.aborted && !signal.aborted)
      throw new BenchError(
        `Runtime ${p.namespace}/${p.name} (image ${p.image}) was not ready within ${timeoutMs / 1000}s: ${describePool(last)}`,
        `is the kruntimes controller running, and does the image run on this cluster? Look with \`krt runtime get ${p.name} -n ${p.namespace}\` (add --keep to keep the namespace)`,
      );
    throw e;
  } finally {
    done.abort();
  }
}
