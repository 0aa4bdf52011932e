/** Builds an in-process scheduler with `pods` Runtime Pods and `runs` Pending Runs. */
import { type Affinity, type Run, TopologyKeys } from "@kruntimes/api";
import { aLease, aPod, aRun, aRuntime } from "../../controller/testing/fixtures.ts";
import { type Harness, schedulerHarness } from "../../controller/testing/scheduler-harness.ts";
import { ManualClock } from "../../controller/util/clock.ts";
import { ManualTimers } from "../../controller/util/timers.ts";

export interface WorldParams {
  pods: number;
  runs: number;
  /** `runs` capacity per pod. */
  capacity: number;
  /** Runtimes the pods and Runs are spread over. */
  runtimes: number;
  /** Give the Runs affinity terms (see `affinityRun`). */
  affinity?: boolean;
}

export interface World {
  h: Harness;
  clock: ManualClock;
}

/** Every DB_EVERY-th Run is a "db" Run: required anti-affinity against other db Runs. */
export const DB_EVERY = 50;
/** Runs per cohort: they must share a pod (required affinity to their cohort label). */
export const COHORT_SIZE = 4;

const term = (matchLabels: Record<string, string>) => ({
  labelSelector: { matchLabels },
  topologyKey: TopologyKeys.runtimePod,
});

/**
 * The affinity workload: every Run carries `app=bench` and prefers to spread from the others
 * (preferred anti-affinity, weight 10). One in DB_EVERY is a `tier=db` Run that refuses other
 * db Runs on its pod (required anti-affinity, so its symmetry is in play for every Run). The
 * rest form cohorts of COHORT_SIZE with required affinity to their own cohort label; cohorts are
 * interleaved in creation order, so the first Run of each seeds it and the others follow it
 * to its pod.
 */
export function affinityRun(i: number, runs: number, runtime: string): Run {
  const spread = { weight: 10, runAffinityTerm: term({ app: "bench" }) };
  if (i % DB_EVERY === 0) {
    const affinity: Affinity = {
      runAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [term({ tier: "db" })],
        preferredDuringSchedulingIgnoredDuringExecution: [spread],
      },
    };
    return aRun({ name: `run-${i}`, runtime, labels: { app: "bench", tier: "db" }, affinity });
  }
  const cohorts = Math.ceil(runs / COHORT_SIZE);
  const cohort = `c${i % cohorts}`;
  const affinity: Affinity = {
    runAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ cohort })] },
    runAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [spread] },
  };
  return aRun({ name: `run-${i}`, runtime, labels: { app: "bench", cohort, tier: "web" }, affinity });
}

export function buildWorld(p: WorldParams): World {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const h = schedulerHarness({ clock, timers });
  for (let r = 0; r < p.runtimes; r++)
    h.scheduler.cache.upsertRuntime(aRuntime(`rt${r}`, { runs: p.capacity }));
  for (let i = 0; i < p.pods; i++) {
    const name = `pod-${String(i).padStart(4, "0")}`;
    h.scheduler.cache.upsertPod(
      aPod({ name, runtime: `rt${i % p.runtimes}`, capacity: { runs: p.capacity } }),
    );
    h.scheduler.cache.upsertLease(aLease(name, `uid-${name}`, clock.now()));
  }
  for (let i = 0; i < p.runs; i++) {
    const runtime = `rt${i % p.runtimes}`;
    h.upsert(p.affinity ? affinityRun(i, p.runs, runtime) : aRun({ name: `run-${i}`, runtime }));
  }
  return { h, clock };
}
