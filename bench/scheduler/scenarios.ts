/**
 * The measured scenarios: an all-fit burst, a contended pool with releases, and memory scaling,
 * each without and with Run affinity in play (world.ts `affinityRun`), in the same process.
 */
import type { Run } from "@kruntimes/api";
import { buildWorld } from "./world.ts";

export interface Params {
  runs: number;
  pods: number;
  repeat: number;
}

export interface Throughput {
  name: string;
  description: string;
  decisions: number;
  /** Median over repeats. */
  decisionsPerSecond: number;
  allDecisionsPerSecond: number[];
  /**
   * Median decisions per CPU-second of this process (user + system): steadier than wall time
   * when other processes share the machine.
   */
  decisionsPerCpuSecond: number;
  binds: number;
  maxPodUse: number;
  capacity: number;
  /** Affinity rules broken by a placement (affinity scenarios; checked on the binder's store). */
  violations?: number;
}

export interface MemoryPoint {
  runs: number;
  pods: number;
  heapMiB: number;
  bytesPerRun: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
/** CPU seconds (user + system) of this process since `from`. */
const cpuSince = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1e6;
};
const flush = () => new Promise((r) => setImmediate(r));

/**
 * Affinity rules broken among the Runs that hold a pod right now: a cohort's placed Runs on more
 * than one pod, or two db Runs on one pod.
 */
function violations(w: ReturnType<typeof buildWorld>): number {
  const cohortPods = new Map<string, Set<string>>();
  const dbPerPod = new Map<string, number>();
  for (const run of w.h.binder.stored.values()) {
    if (run.status?.phase !== "Scheduled") continue;
    const pod = run.status.assignment?.pod as string;
    const labels = run.metadata.labels ?? {};
    if (labels.tier === "db") dbPerPod.set(pod, (dbPerPod.get(pod) ?? 0) + 1);
    const cohort = labels.cohort;
    if (cohort) {
      const pods = cohortPods.get(cohort) ?? new Set();
      pods.add(pod);
      cohortPods.set(cohort, pods);
    }
  }
  let n = 0;
  for (const pods of cohortPods.values()) n += pods.size - 1;
  for (const count of dbPerPod.values()) n += Math.max(0, count - 1);
  return n;
}

function maxUse(w: ReturnType<typeof buildWorld>): number {
  let max = 0;
  for (const rt of Array.from({ length: 1 }, (_, i) => `ns/rt${i}`)) {
    for (const p of w.h.scheduler.cache.podsOf(rt)) max = Math.max(max, p.used.runs ?? 0);
  }
  return max;
}

const AFFINITY_TERMS =
  "cohorts of 4 with required affinity, 1 in 50 with required anti-affinity, all with preferred anti-affinity";

/**
 * Every Run fits: runs/pods slots per pod. One decision = one cycle that assumes and binds.
 * With affinity, cohorts fill pods unevenly, so the pool has 25 % more slots than Runs.
 */
async function allFit(p: Params, affinity: boolean): Promise<Throughput> {
  const capacity = Math.ceil(((affinity ? 1.25 : 1) * p.runs) / p.pods);
  const rates: number[] = [];
  const cpuRates: number[] = [];
  let binds = 0;
  let use = 0;
  let decisions = 0;
  let broken = 0;
  for (let i = 0; i < p.repeat; i++) {
    const w = buildWorld({ pods: p.pods, runs: p.runs, capacity, runtimes: 1, affinity });
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const n = w.h.drain();
    const dt = (performance.now() - t0) / 1000;
    cpuRates.push(n / cpuSince(c0));
    await flush();
    rates.push(n / dt);
    decisions = n;
    binds = w.h.binder.bound.length;
    use = maxUse(w);
    if (affinity) broken = Math.max(broken, violations(w));
  }
  return {
    name: affinity ? "affinity all-fit" : "all-fit",
    description: affinity
      ? `${p.runs} Pending Runs (${AFFINITY_TERMS}), ${p.pods} pods × ${capacity} slots`
      : `${p.runs} Pending Runs, ${p.pods} pods × ${capacity} slots: every cycle binds`,
    decisions,
    decisionsPerSecond: Math.round(median(rates)),
    allDecisionsPerSecond: rates.map(Math.round),
    decisionsPerCpuSecond: Math.round(median(cpuRates)),
    binds,
    maxPodUse: use,
    capacity,
    ...(affinity ? { violations: broken } : {}),
  };
}

/**
 * Contended: 8 slots per pod, so most Runs park; then Runs finish one by one (the informer event
 * of a terminal status) and each release wakes what fits. Decisions = every cycle, including
 * the unschedulable first pass.
 */
async function contended(p: Params, affinity: boolean): Promise<Throughput> {
  const capacity = 8;
  const rates: number[] = [];
  const cpuRates: number[] = [];
  let binds = 0;
  let use = 0;
  let decisions = 0;
  let broken = 0;
  for (let i = 0; i < p.repeat; i++) {
    const w = buildWorld({ pods: p.pods, runs: p.runs, capacity, runtimes: 1, affinity });
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let n = w.h.drain();
    await flush();
    const done = new Set<string>();
    let checking = 0;
    let checkingCpu = 0;
    for (let round = 0; done.size < p.runs && round < p.runs; round++) {
      if (affinity) {
        // The check is the benchmark's, not the scheduler's: its time is not counted.
        const k0 = performance.now();
        const kc = process.cpuUsage();
        broken = Math.max(broken, violations(w));
        checking += performance.now() - k0;
        checkingCpu += cpuSince(kc);
      }
      const finished = done.size;
      for (const [key, run] of w.h.binder.stored) {
        if (run.status?.phase !== "Scheduled" || done.has(key)) continue;
        done.add(key);
        w.h.upsert({ ...run, status: { ...run.status, phase: "Succeeded" } } as Run);
      }
      n += w.h.drain();
      await flush();
      use = Math.max(use, maxUse(w));
      // Nothing ran and nothing was placed: the rest can never be (reported as binds < Runs).
      if (done.size === finished) break;
    }
    const dt = (performance.now() - t0 - checking) / 1000;
    rates.push(n / dt);
    cpuRates.push(n / (cpuSince(c0) - checkingCpu));
    binds = w.h.binder.bound.length;
    decisions = n;
  }
  return {
    name: affinity ? "affinity contended" : "contended",
    description: affinity
      ? `${p.runs} Runs (${AFFINITY_TERMS}), ${p.pods} pods × ${capacity} slots; Runs finish and releases wake what fits`
      : `${p.runs} Runs, ${p.pods} pods × ${capacity} slots; Runs finish and releases wake what fits`,
    decisions,
    decisionsPerSecond: Math.round(median(rates)),
    allDecisionsPerSecond: rates.map(Math.round),
    decisionsPerCpuSecond: Math.round(median(cpuRates)),
    binds,
    maxPodUse: use,
    capacity,
    ...(affinity ? { violations: broken } : {}),
  };
}

function heapBytes(): number {
  for (let i = 0; i < 3; i++) Bun.gc(true);
  return process.memoryUsage().heapUsed;
}

/** Heap held by the scheduler state (pods, Run objects, queue) at growing sizes. */
function memory(p: Params): MemoryPoint[] {
  const out: MemoryPoint[] = [];
  buildWorld({ pods: 10, runs: 100, capacity: 8, runtimes: 1 }); // warm up code and shapes
  for (const f of [0.25, 0.5, 1, 2, 4]) {
    const runs = Math.round(p.runs * f);
    const pods = Math.round(p.pods * f);
    const before = heapBytes();
    const w = buildWorld({ pods, runs, capacity: 8, runtimes: 1 });
    const after = heapBytes();
    out.push({
      runs,
      pods,
      heapMiB: Math.round(((after - before) / 2 ** 20) * 10) / 10,
      bytesPerRun: Math.round((after - before) / runs),
    });
    void w;
  }
  return out;
}

export async function runScenarios(p: Params) {
  const throughput = [
    await allFit(p, false),
    await contended(p, false),
    await allFit(p, true),
    await contended(p, true),
  ];
  return { throughput, memory: memory(p) };
}
