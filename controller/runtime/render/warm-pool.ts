/**
 * How many warm interpreters the controller asks each runtime container for. The Runtime
 * Server's own default (2) made a quarter of a 25-Run burst start cold on 2 pods × 64 slots: a
 * cold start is a whole interpreter start on the Run's critical path (python: tens of ms). The
 * pool grows with the Runs a pod takes at once (a quarter of `capacity.runs`, at least 2, never
 * more than the Runs it can take), capped because every idle interpreter holds memory. The
 * user's own `KRT_WARM_POOL` on the runtime container wins; so does a `--warm-pool` flag there.
 */
import { RUNS_RESOURCE } from "@kruntimes/api";
import { Env } from "./contract.ts";
import type { EnvVar } from "./pod-types.ts";

/** A quarter of the slots: bursts are absorbed while refills (one at a time) catch up. */
const SLOTS_PER_WARM = 4;
const MIN_WARM = 2;

/** The pool size for a pod with this capacity; undefined leaves the Runtime Server's default. */
export function warmPoolSize(capacity: Record<string, number>, max: number): number | undefined {
  if (max <= 0) return undefined;
  const runs = Math.max(1, capacity[RUNS_RESOURCE] ?? 1);
  return Math.min(runs, max, Math.max(MIN_WARM, Math.ceil(runs / SLOTS_PER_WARM)));
}

/** The runtime container's env with `KRT_WARM_POOL` added, unless the user set it. */
export function withWarmPool(env: EnvVar[], capacity: Record<string, number>, max: number): EnvVar[] {
  const size = warmPoolSize(capacity, max);
  if (size === undefined || env.some((e) => e.name === Env.warmPool)) return env;
  return [...env, { name: Env.warmPool, value: String(size) }];
}
