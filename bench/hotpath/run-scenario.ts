/**
 * One scenario: a fresh Runtime of the scenario's shape, awaited until ready; then its Runs,
 * created `concurrency` at a time (or one at a time, each when the one before was seen ending,
 * with `oneAtATime`) with the client's µs clock in the created-micros annotation,
 * collected by one watch as they end; the breakdown; the Runs and Runtime deleted.
 */
import {
  Annotations,
  API_VERSION,
  isTerminalPhase,
  RUN_KIND,
  type Run,
  RunResource,
  RuntimeResource,
} from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import { BenchError } from "./bench-error.ts";
import { type Breakdown, breakdown } from "./breakdown.ts";
import { DoneCollector } from "./collector.ts";
import { inParallel } from "./pool-limit.ts";
import type { Progress } from "./progress.ts";
import { BENCH_LABEL, createPool, type PoolSpec, waitPoolReady } from "./runtime-pool.ts";
import { type RuntimeLanguage, type Scenario, workSpec } from "./scenarios.ts";

export { BENCH_LABEL };

/** Time for a Ready pool's warm interpreters to finish starting (python: ~50 ms each, 8 per pod). */
const WARM_SETTLE_MS = 3000;

export interface ScenarioContext {
  client: KubeClient;
  namespace: string;
  language: RuntimeLanguage;
  image: string;
  readyTimeoutMs: number;
  /** Longest the Runs of one scenario may take once the first is created. */
  runTimeoutMs: number;
  nowMicros(): number;
  progress: Progress;
  signal: AbortSignal;
}

export interface ScenarioResult {
  scenario: Scenario;
  language: RuntimeLanguage;
  image: string;
  breakdown: Breakdown;
  /** Phases and reasons of the Runs that did not succeed (bounded). */
  failures: { name: string; phase?: string; reason?: string; message?: string }[];
}

export async function runScenario(ctx: ScenarioContext, sc: Scenario): Promise<ScenarioResult> {
  const { client, namespace, progress } = ctx;
  const pool: PoolSpec = {
    namespace,
    name: `bench-${sc.name}-${ctx.language}`,
    image: ctx.image,
    pods: sc.pods,
    slotsPerPod: sc.slotsPerPod,
  };
  progress.line(
    `${sc.name}: creating Runtime ${pool.name} (${sc.pods} pods × ${sc.slotsPerPod} slots, ${pool.image})`,
  );
  await createPool(client, pool);
  try {
    await waitPoolReady(client, pool, ctx.readyTimeoutMs, ctx.signal);
    // A Ready pod's Runtime Server is still starting its warm interpreters (one at a time, in
    // the background): measuring at once would time that start-up, not an idle warm pool.
    await Bun.sleep(WARM_SETTLE_MS);
    return await createAndCollect(ctx, sc, pool.name);
  } finally {
    await client
      .delete(path(RunResource, namespace), undefined, { labelSelector: `${BENCH_LABEL}=${pool.name}` })
      .catch(() => {});
    await client.delete(path(RuntimeResource, namespace, pool.name)).catch(() => {});
  }
}

async function createAndCollect(
  ctx: ScenarioContext,
  sc: Scenario,
  runtime: string,
): Promise<ScenarioResult> {
  const { client, namespace, progress } = ctx;
  const spec = workSpec(runtime, ctx.language, sc.work);
  const acked = new Map<string, number>();
  const boundSeen = new Map<string, number>();
  const collector = new DoneCollector<Run>(
    client,
    path(RunResource, namespace),
    `${BENCH_LABEL}=${runtime}`,
    (r) => isTerminalPhase(r.status?.phase),
    ctx.nowMicros,
    (r, micros) => {
      const name = r.metadata.name ?? "";
      if (r.status?.assignment && !boundSeen.has(name)) boundSeen.set(name, micros);
    },
  );
  await collector.start();
  const deadline = AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.runTimeoutMs)]);
  let created = 0;
  const status = (done: number) =>
    progress.update(
      `${sc.name} (${ctx.language}): created ${created}/${sc.runs}, finished ${done}/${sc.runs}`,
    );
  try {
    const creating = inParallel(
      sc.runs,
      sc.oneAtATime ? 1 : sc.concurrency,
      async (i) => {
        await client.create<Run>(path(RunResource, namespace), {
          apiVersion: API_VERSION,
          kind: RUN_KIND,
          metadata: {
            name: `${runtime}-${i}`,
            labels: { [BENCH_LABEL]: runtime },
            annotations: { [Annotations.createdMicros]: String(ctx.nowMicros()) },
          },
          spec,
        });
        acked.set(`${runtime}-${i}`, ctx.nowMicros());
        created++;
        status(collector.done.size);
        // Runs are created in order, so this one has ended once i + 1 have.
        if (sc.oneAtATime) await collector.waitFor(i + 1, deadline);
      },
      deadline,
    );
    await Promise.all([creating, collector.waitFor(sc.runs, deadline, status)]);
  } catch (e) {
    if (deadline.aborted && !ctx.signal.aborted)
      throw new BenchError(
        `${sc.name}: only ${collector.done.size} of ${sc.runs} Runs ended within ${ctx.runTimeoutMs / 1000}s (${created} created)`,
        `rerun with --keep and look with \`krt list -n ${namespace} -o wide\`; a longer --timeout may help`,
      );
    throw e;
  } finally {
    await collector.stop();
  }
  const samples = [...collector.done.values()].map((s) => ({
    run: s.object,
    seenMicros: s.seenMicros,
    ackMicros: acked.get(s.object.metadata.name ?? ""),
    boundSeenMicros: boundSeen.get(s.object.metadata.name ?? ""),
  }));
  const failures = samples
    .filter((s) => s.run.status?.phase !== "Succeeded")
    .slice(0, 20)
    .map((s) => ({
      name: s.run.metadata.name ?? "",
      phase: s.run.status?.phase,
      reason: s.run.status?.reason,
      message: s.run.status?.message,
    }));
  const b = breakdown(samples, sc.pods * sc.slotsPerPod);
  progress.line(
    `${sc.name} (${ctx.language}): ${b.succeeded} succeeded, ${b.failed} failed in ${b.wallSeconds.toFixed(2)}s`,
  );
  return { scenario: sc, language: ctx.language, image: ctx.image, breakdown: b, failures };
}
