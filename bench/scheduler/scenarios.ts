/** The measured scenarios: an all-fit burst, a contended pool with releases, and memory scaling. */
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
  binds: number;
  maxPodUse: number;
  capacity: number;
}

export interface MemoryPoint {
  runs: number;
  pods: number;
  heapMiB: number;
  bytesPerRun: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const flush = () => new Promise((r) => setImmediate(r));

function maxUse(w: ReturnType<typeof buildWorld>): number {
  let max = 0;
  for (const rt of Array.from({ length: 1 }, (_, i) => `ns/rt${i}`)) {
    for (const p of w.h.scheduler.cache.podsOf(rt)) max = Math.max(max, p.used.runs ?? 0);
  }
  return max;
}

/** Every Run fits: runs/pods slots per pod. One decision = one cycle that assumes and binds. */
async function allFit(p: Params): Promise<Throughput> {
  const capacity = Math.ceil(p.runs / p.pods);
  const rates: number[] = [];
  let binds = 0;
  let use = 0;
  for (let i = 0; i < p.repeat; i++) {
    const w = buildWorld({ pods: p.pods, runs: p.runs, capacity, runtimes: 1 });
    const t0 = performance.now();
    const n = w.h.drain();
    const dt = (performance.now() - t0) / 1000;
    await flush();
    rates.push(n / dt);
    binds = w.h.binder.bound.length;
    use = maxUse(w);
  }
  return {
    name: "all-fit",
    description: `${p.runs} Pending Runs, ${p.pods} pods × ${capacity} slots: every cycle binds`,
    decisions: p.runs,
    decisionsPerSecond: Math.round(median(rates)),
    allDecisionsPerSecond: rates.map(Math.round),
    binds,
    maxPodUse: use,
    capacity,
  };
}

/**
 * Contended: 8 slots per pod, so most Runs park; then Runs finish one by one (the informer event
 * of a terminal status) and each release wakes what fits. Decisions = every cycle, including
 * the unschedulable first pass.
 */
async function contended(p: Params): Promise<Throughput> {
  const capacity = 8;
  const rates: number[] = [];
  let binds = 0;
  let use = 0;
  let decisions = 0;
  for (let i = 0; i < p.repeat; i++) {
    const w = buildWorld({ pods: p.pods, runs: p.runs, capacity, runtimes: 1 });
    const t0 = performance.now();
    let n = w.h.drain();
    await flush();
    const done = new Set<string>();
    for (let round = 0; done.size < p.runs && round < p.runs; round++) {
      for (const [key, run] of w.h.binder.stored) {
        if (run.status?.phase !== "Scheduled" || done.has(key)) continue;
        done.add(key);
        w.h.upsert({ ...run, status: { ...run.status, phase: "Succeeded" } } as Run);
      }
      n += w.h.drain();
      await flush();
      use = Math.max(use, maxUse(w));
    }
    const dt = (performance.now() - t0) / 1000;
    rates.push(n / dt);
    binds = w.h.binder.bound.length;
    decisions = n;
  }
  return {
    name: "contended",
    description: `${p.runs} Runs, ${p.pods} pods × ${capacity} slots; Runs finish and releases wake what fits`,
    decisions,
    decisionsPerSecond: Math.round(median(rates)),
    allDecisionsPerSecond: rates.map(Math.round),
    binds,
    maxPodUse: use,
    capacity,
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
  const throughput = [await allFit(p), await contended(p)];
  return { throughput, memory: memory(p) };
}
