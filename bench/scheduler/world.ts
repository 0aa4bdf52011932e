/** Builds an in-process scheduler with `pods` Runtime Pods and `runs` Pending Runs. */
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
}

export interface World {
  h: Harness;
  clock: ManualClock;
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
    h.upsert(aRun({ name: `run-${i}`, runtime: `rt${i % p.runtimes}` }));
  }
  return { h, clock };
}
