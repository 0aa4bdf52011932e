/**
 * `krt bench`: the scenarios, then the baselines, in one namespace — one the benchmark creates, or
 * a given one — which the caller cleans up, also on Ctrl-C. Everything the result holds was measured in this run.
 */
import { RunResource, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { type JobBaseline, measureJobs } from "./job-baseline.ts";
import { type ClusterInfo, clusterInfo, type MachineInfo, machineInfo } from "./machine.ts";
import type { Progress } from "./progress.ts";
import {
  floorLevels,
  measureRunFloor,
  measureRunWriteCeiling,
  type RunFloor,
  type RunWriteCeiling,
} from "./run-floor.ts";
import { BENCH_LABEL, runScenario, type ScenarioResult } from "./run-scenario.ts";
import { arrivalsText, type RuntimeLanguage, type Scenario } from "./scenarios.ts";
import { measureWriteCeiling, type WriteCeiling } from "./write-ceiling.ts";

export interface BenchOptions {
  scenarios: Scenario[];
  /** Each scenario runs once per runtime, in this order. */
  runtimes: { language: RuntimeLanguage; image: string }[];
  /** Measure the apiserver write ceiling (ConfigMap creates + patches). */
  ceiling: boolean;
  /** ConfigMaps for the ceiling (2 writes each); also the Runs of the Run write ceiling (3 each). */
  ceilingObjects: number;
  /** Measure the Run-shaped floor (three chained writes per Run, serially and at each scenario's concurrency). */
  floor: boolean;
  /** Jobs for the pod-per-task baseline; 0 skips it. */
  jobs: number;
  jobConcurrency: number;
  readyTimeoutMs: number;
  runTimeoutMs: number;
}

export interface BenchResult {
  startedAt: string;
  machine: MachineInfo;
  cluster: ClusterInfo;
  namespace: string;
  options: Omit<BenchOptions, "scenarios">;
  scenarios: ScenarioResult[];
  ceiling?: WriteCeiling;
  /** The Run-shaped floor, one entry per concurrency (1 and each scenario's). */
  floors?: RunFloor[];
  /** The same three writes on Run objects at the busiest scenario's concurrency. */
  runCeiling?: RunWriteCeiling;
  jobs?: JobBaseline;
}

export interface BenchEnv {
  client: KubeClient;
  nowMicros(): number;
  progress: Progress;
  signal: AbortSignal;
  /** An existing namespace to use instead of creating one (its other contents are left alone). */
  namespace?: string;
  /** Told the namespace's name as soon as it exists, so it can be cleaned up whatever happens. */
  onNamespace(name: string, created: boolean): void;
}

export async function runBench(env: BenchEnv, opts: BenchOptions): Promise<BenchResult> {
  const { client, progress, signal } = env;
  const startedAt = new Date().toISOString();
  let namespace = env.namespace;
  if (namespace === undefined) {
    const ns = await client.create<{ metadata: { name: string } }>(path(R.namespaces), {
      metadata: { generateName: "krt-bench-", labels: { "app.kubernetes.io/managed-by": "krt-bench" } },
    });
    namespace = ns.metadata.name;
    env.onNamespace(namespace, true);
    progress.line(`namespace ${namespace}`);
    await waitForServiceAccount(client, namespace, signal);
  } else env.onNamespace(namespace, false);

  const base = {
    client,
    namespace,
    readyTimeoutMs: opts.readyTimeoutMs,
    runTimeoutMs: opts.runTimeoutMs,
    nowMicros: env.nowMicros,
    progress,
    signal,
  };
  // Baselines first: the hot path (the first scenario) then runs right after them, under the same load.
  let ceiling: WriteCeiling | undefined;
  if (opts.ceiling) {
    const concurrency = Math.max(...opts.scenarios.map((s) => s.concurrency));
    progress.line(`ceiling: ${opts.ceilingObjects} ConfigMap creates + patches, ${concurrency} in flight`);
    ceiling = await measureWriteCeiling(
      client,
      namespace,
      opts.ceilingObjects,
      concurrency,
      env.nowMicros,
      signal,
    );
  }
  let runCeiling: RunWriteCeiling | undefined;
  if (opts.ceiling) {
    const concurrency = Math.max(...opts.scenarios.map((s) => s.concurrency));
    progress.line(`Run write ceiling: ${opts.ceilingObjects} Runs × 3 writes, ${concurrency} in flight`);
    runCeiling = await measureRunWriteCeiling(
      client,
      namespace,
      opts.ceilingObjects,
      concurrency,
      env.nowMicros,
      signal,
    );
  }
  let jobs: JobBaseline | undefined;
  if (opts.jobs > 0) {
    progress.line(`jobs: ${opts.jobs} Jobs (bash -c true), ${opts.jobConcurrency} created at a time`);
    jobs = await measureJobs(
      client,
      namespace,
      opts.jobs,
      opts.jobConcurrency,
      opts.runTimeoutMs,
      env.nowMicros,
      progress,
      signal,
    );
  }
  // The floor right before the scenarios it is the floor of.
  let floors: RunFloor[] | undefined;
  if (opts.floor) {
    floors = [];
    for (const level of floorLevels(opts.scenarios)) {
      progress.line(`floor: ${level.runs} Run-shaped write chains, ${arrivalsText(level)}`);
      floors.push(await measureRunFloor(client, namespace, level, env.nowMicros, signal));
    }
  }
  const scenarios: ScenarioResult[] = [];
  for (const rt of opts.runtimes)
    for (const sc of opts.scenarios) scenarios.push(await runScenario({ ...base, ...rt }, sc));

  const { scenarios: _, ...rest } = opts;
  return {
    startedAt,
    machine: machineInfo(),
    cluster: await clusterInfo(client),
    namespace,
    options: rest,
    scenarios,
    ceiling,
    floors,
    runCeiling,
    jobs,
  };
}

/** Pods (the Runtime's, the Jobs') need the namespace's default ServiceAccount, made asynchronously. */
async function waitForServiceAccount(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      await client.get(path(R.serviceAccounts, namespace, "default"));
      return;
    } catch {
      await Bun.sleep(100);
    }
  }
}

/** Deletes what the benchmark made in a namespace it was given: everything with its label. */
export async function deleteBenchObjects(client: KubeClient, namespace: string): Promise<void> {
  const selector = { labelSelector: BENCH_LABEL, propagationPolicy: "Background" };
  for (const r of [RunResource, RuntimeResource, R.configMaps, R.jobs])
    await client.delete(path(r, namespace), undefined, selector).catch(() => {});
}

/** Deletes the benchmark's namespace (and with it every Runtime, Run, ConfigMap and Job in it). */
export async function deleteBenchNamespace(client: KubeClient, namespace: string): Promise<void> {
  await client
    .delete(path(R.namespaces, undefined, namespace), { propagationPolicy: "Background" })
    .catch(() => {});
}
