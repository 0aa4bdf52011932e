/**
 * The Run-shaped floor and the Run write ceiling, on Run objects themselves (same CRD, schema and
 * CEL rules as the scenarios' Runs). A floor chain is the hot path's three writes with nothing in
 * between but a watch: create, a bind-shaped status patch, a finish-shaped status patch, each sent
 * when a separate watcher has seen the write before it — so a chain's complete time is the least
 * three writes and three watch hops can take on this cluster, right now, under the load the
 * scenario offers: chains arrive as a scenario's Runs do (`concurrency` creates in flight, the next
 * sent when one is answered), and each goes on by itself, so they overlap as the Runs do — or, for
 * a scenario that runs one Run at a time, one chain at a time.
 * The ceiling sends the same three writes per object back to back, as many in flight as the
 * busiest scenario: the most Run writes per second the apiserver takes from this client.
 *
 * The floor's Runs name a Runtime that does not exist and never get an assignment, so a
 * controller leaves them alone: it parks them in memory (its waiting-reason write comes only
 * after --waiting-reason-delay, 1 s, and the bind-shaped write moves them off Pending first) and
 * has no pod to assess.
 */
import {
  Annotations,
  API_VERSION,
  Reason,
  RUN_KIND,
  type Run,
  RunPhase,
  RunResource,
  type RunStatus,
} from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import { DoneCollector } from "./collector.ts";
import { inParallel } from "./pool-limit.ts";
import { BENCH_LABEL } from "./runtime-pool.ts";
import type { Scenario } from "./scenarios.ts";
import { type Summary, summarize } from "./stats.ts";

/** The Runtime the floor's Runs name: never created, so nothing schedules them. */
export const FLOOR_RUNTIME = "krt-bench-floor-no-runtime";
const FLOOR_LABEL = "floor";
const CEILING_LABEL = "run-ceiling";

export interface FloorLevel {
  /** Creates in flight at once (as a scenario's `concurrency`); each chain then goes on by itself. */
  concurrency: number;
  /** One chain at a time, the next when the one before was seen finished (a scenario's `oneAtATime`). */
  oneAtATime: boolean;
  /** Chains (Runs), three writes each, over all rounds. */
  runs: number;
  /**
   * Rounds of runs ÷ rounds chains, one after another, samples pooled: a round lasts well under a
   * second, and one apiserver GC cycle inside a single round moved its p50 by 2× (2026-12-05).
   */
  rounds: number;
}

export interface RunFloor extends FloorLevel {
  seconds: number;
  /** Write sent → the watcher sees it, ms, per write of the chain. */
  create: Summary;
  bind: Summary;
  finish: Summary;
  /** Create sent → the finish write seen, ms: the floor under a Run's complete. */
  complete: Summary;
  /** Status patches whose fence failed (a controller wrote first) and were sent again unfenced. */
  refenced: number;
}

export interface RunWriteCeiling {
  objects: number;
  writes: number;
  concurrency: number;
  seconds: number;
  writesPerSecond: number;
  /** writesPerSecond ÷ 3: the most Runs/s these writes allow. */
  idealRunsPerSecond: number;
}

export const FLOOR_ROUNDS = 3;

/** How a scenario's Runs arrive, which its floor repeats. */
export type Arrivals = Pick<Scenario, "concurrency" | "oneAtATime">;

/**
 * The floors to measure: always one chain at a time (the serial floor), and one for each other
 * way the chosen scenarios' Runs arrive; each in FLOOR_ROUNDS rounds of twice as many chains as in
 * flight (30..200 a round).
 */
export function floorLevels(scenarios: readonly Arrivals[]): FloorLevel[] {
  const keyOf = (a: Arrivals) => (a.oneAtATime ? "one" : String(a.concurrency));
  const levels = new Map<string, Arrivals>([["one", { concurrency: 1, oneAtATime: true }]]);
  for (const s of scenarios) if (!levels.has(keyOf(s))) levels.set(keyOf(s), s);
  return [...levels.values()]
    .sort(
      (a, b) =>
        a.concurrency - b.concurrency || Number(Boolean(b.oneAtATime)) - Number(Boolean(a.oneAtATime)),
    )
    .map((a) => {
      const c = a.oneAtATime ? 1 : a.concurrency;
      return {
        concurrency: c,
        oneAtATime: Boolean(a.oneAtATime),
        runs: FLOOR_ROUNDS * Math.min(200, Math.max(30, 2 * c)),
        rounds: FLOOR_ROUNDS,
      };
    });
}

/** The floor measured for a scenario's arrivals (undefined when it was not measured). */
export function floorFor(floors: readonly RunFloor[], a: Arrivals): RunFloor | undefined {
  const one = Boolean(a.oneAtATime);
  return floors.find((f) => Boolean(f.oneAtATime) === one && (one || f.concurrency === a.concurrency));
}

export interface FloorRatio {
  /** Scenario complete p50 ÷ floor complete p50 (and p95 ÷ p95) at the scenario's concurrency. */
  p50: number;
  p95: number;
  floorConcurrency: number;
  /** The floor's chains went one at a time. */
  floorOneAtATime: boolean;
}

export function floorRatio(
  complete: Pick<Summary, "p50" | "p95">,
  floors: readonly RunFloor[],
  arrivals: Arrivals,
): FloorRatio | undefined {
  const f = floorFor(floors, arrivals);
  if (!f || !(f.complete.p50 > 0) || !(f.complete.p95 > 0)) return undefined;
  return {
    p50: complete.p50 / f.complete.p50,
    p95: complete.p95 / f.complete.p95,
    floorConcurrency: f.concurrency,
    floorOneAtATime: Boolean(f.oneAtATime),
  };
}

/** What the Run looks like after the bind (the controller's write): phase, attempt, timing, condition. */
export function bindStatus(
  generation: number | undefined,
  createdMicros: number,
  micros: number,
  now: string,
): RunStatus {
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    phase: RunPhase.Scheduled,
    attempt: 1,
    timing: { createdMicros, scheduledMicros: micros },
    conditions: [
      {
        type: "Scheduled",
        status: "True",
        reason: "Scheduled",
        message: "bound to pod krt-bench-floor-0123456789-abcde",
        lastTransitionTime: now,
        ...(generation !== undefined ? { observedGeneration: generation } : {}),
      },
    ],
  } as RunStatus;
}

/** What the Run looks like after runtimed's terminal write: Succeeded, exit 0, full timing. */
export function finishStatus(bound: RunStatus, micros: number, now: string): RunStatus {
  return {
    ...bound,
    phase: RunPhase.Succeeded,
    reason: Reason.Completed,
    message: "the task exited with code 0",
    exitCode: 0,
    timing: { ...bound.timing, startedMicros: micros, finishedMicros: micros, reportedMicros: micros },
    conditions: [
      ...(bound.conditions ?? []),
      {
        type: "Finished",
        status: "True",
        reason: Reason.Completed,
        message: "the task exited with code 0",
        lastTransitionTime: now,
      },
    ],
  } as RunStatus;
}

/** The fenced JSON patch both writers send: test phase and attempt, then replace /status whole. */
export function fencedReplace(prev: RunStatus | undefined, next: RunStatus) {
  const fence = prev
    ? [
        { op: "test", path: "/status/phase", value: prev.phase ?? null },
        { op: "test", path: "/status/attempt", value: prev.attempt ?? null },
      ]
    : [{ op: "test", path: "/status", value: null }];
  return [...fence, { op: "add", path: "/status", value: next }];
}

function floorRun(name: string, label: string, micros: number): Run {
  return {
    apiVersion: API_VERSION,
    kind: RUN_KIND,
    metadata: {
      name,
      labels: { [BENCH_LABEL]: label },
      annotations: { [Annotations.createdMicros]: String(micros) },
    },
    spec: { runtime: FLOOR_RUNTIME, mode: { task: {} }, source: { inline: "true\n" } },
  } as Run;
}

type Stage = "created" | "bound" | "finished";
const stageOf = (r: Run): Stage =>
  r.status?.phase === "Succeeded" ? "finished" : r.status?.phase === "Scheduled" ? "bound" : "created";
const ORDER: Record<Stage, number> = { created: 0, bound: 1, finished: 2 };

/** Resolves waits for "the watcher has seen Run x reach stage s", with the µs it was seen. */
class StageWaits {
  private readonly seen = new Map<string, Map<Stage, number>>();
  private readonly waiters = new Map<string, { stage: Stage; resolve: (micros: number) => void }>();

  observe(r: Run, micros: number): void {
    const name = r.metadata.name ?? "";
    const stages = this.seen.get(name) ?? new Map<Stage, number>();
    this.seen.set(name, stages);
    // One event may carry a later stage than the one before it (events coalesce): it implies them.
    for (const s of ["created", "bound", "finished"] as const)
      if (ORDER[s] <= ORDER[stageOf(r)] && !stages.has(s)) stages.set(s, micros);
    const w = this.waiters.get(name);
    const at = w && stages.get(w.stage);
    if (w && at !== undefined) {
      this.waiters.delete(name);
      w.resolve(at);
    }
  }

  wait(name: string, stage: Stage, signal: AbortSignal): Promise<number> {
    const at = this.seen.get(name)?.get(stage);
    if (at !== undefined) return Promise.resolve(at);
    if (signal.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason ?? new Error("aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(name, {
        stage,
        resolve: (m) => {
          signal.removeEventListener("abort", onAbort);
          resolve(m);
        },
      });
    });
  }
}

/** A status patch with the writers' fence; when a controller wrote first (422), sent again without it. */
async function patchStatus(
  client: KubeClient,
  p: string,
  prev: RunStatus | undefined,
  next: RunStatus,
  onRefence: () => void,
): Promise<Run> {
  try {
    return await client.patch<Run>(p, fencedReplace(prev, next), "json");
  } catch (e) {
    if (!(e instanceof KubeError) || e.code !== 422) throw e;
    onRefence();
    return client.patch<Run>(p, [{ op: "add", path: "/status", value: next }], "json");
  }
}

export async function measureRunFloor(
  client: KubeClient,
  namespace: string,
  level: FloorLevel,
  nowMicros: () => number,
  signal: AbortSignal,
): Promise<RunFloor> {
  const label = `${FLOOR_LABEL}-${level.oneAtATime ? "one" : level.concurrency}`;
  const waits = new StageWaits();
  const watcher = new DoneCollector<Run>(
    client,
    path(RunResource, namespace),
    `${BENCH_LABEL}=${label}`,
    (r) => r.status?.phase === "Succeeded",
    nowMicros,
    (r, micros) => waits.observe(r, micros),
  );
  await watcher.start();
  const hops: Record<"create" | "bind" | "finish" | "complete", number[]> = {
    create: [],
    bind: [],
    finish: [],
    complete: [],
  };
  let refenced = 0;
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(120_000)]);
  const started = performance.now();
  const chains: Promise<void>[] = [];
  const perRound = Math.ceil(level.runs / Math.max(1, level.rounds));
  try {
    for (let round = 0; round * perRound < level.runs; round++) {
      await inParallel(
        Math.min(perRound, level.runs - round * perRound),
        level.concurrency,
        async (j) => {
          const name = `${label}-${round * perRound + j}`;
          const at = path(RunResource, namespace, name);
          // Each write goes out when the watch sees the one before (as the controller binds and
          // runtimed reports on watch events), not when the previous response arrives.
          const t0 = nowMicros();
          const writes: Promise<unknown>[] = [];
          const seen = (stage: Stage, write: Promise<unknown>) => {
            writes.push(write);
            // A failed write fails the chain at once instead of waiting for an event that never comes.
            return Promise.race([
              waits.wait(name, stage, deadline),
              write.then(() => new Promise<number>(() => {})),
            ]);
          };
          const create = client.create<Run>(path(RunResource, namespace), floorRun(name, label, t0));
          const chain = (async () => {
            const s1 = await seen("created", create);
            const t1 = nowMicros();
            const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
            // A new object's generation is 1.
            const bound = bindStatus(1, t0, t1, now);
            const s2 = await seen(
              "bound",
              patchStatus(client, `${at}/status`, undefined, bound, () => refenced++),
            );
            const t2 = nowMicros();
            const s3 = await seen(
              "finished",
              patchStatus(client, `${at}/status`, bound, finishStatus(bound, t2, now), () => refenced++),
            );
            await Promise.all(writes);
            hops.create.push((s1 - t0) / 1000);
            hops.bind.push((s2 - t1) / 1000);
            hops.finish.push((s3 - t2) / 1000);
            hops.complete.push((s3 - t0) / 1000);
          })();
          chain.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
          chains.push(chain);
          // The scenarios' arrival process: the next create goes out when this one is answered, and
          // the chain goes on by itself — so "25 in flight" offers the apiserver the same load here
          // as in the hotpath scenario (up to all its Runs in the system at once). One at a time:
          // the next chain starts when this one's finish is seen.
          await (level.oneAtATime ? chain : create);
        },
        deadline,
      );
      await Promise.all(chains);
    }
  } finally {
    await watcher.stop();
    await deleteLabelled(client, namespace, label);
  }
  return {
    ...level,
    seconds: (performance.now() - started) / 1000,
    create: summarize(hops.create),
    bind: summarize(hops.bind),
    finish: summarize(hops.finish),
    complete: summarize(hops.complete),
    refenced,
  };
}

/** The same three writes per Run, back to back, `concurrency` Runs at a time; the watcher only confirms. */
export async function measureRunWriteCeiling(
  client: KubeClient,
  namespace: string,
  objects: number,
  concurrency: number,
  nowMicros: () => number,
  signal: AbortSignal,
): Promise<RunWriteCeiling> {
  const watcher = new DoneCollector<Run>(
    client,
    path(RunResource, namespace),
    `${BENCH_LABEL}=${CEILING_LABEL}`,
    (r) => r.status?.phase === "Succeeded",
    nowMicros,
  );
  await watcher.start();
  const started = performance.now();
  try {
    await inParallel(
      objects,
      concurrency,
      async (i) => {
        const name = `${CEILING_LABEL}-${i}`;
        const at = `${path(RunResource, namespace, name)}/status`;
        const t0 = nowMicros();
        const created = await client.create<Run>(
          path(RunResource, namespace),
          floorRun(name, CEILING_LABEL, t0),
        );
        const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
        const bound = bindStatus(created.metadata.generation, t0, nowMicros(), now);
        await patchStatus(client, at, created.status, bound, () => {});
        await patchStatus(client, at, bound, finishStatus(bound, nowMicros(), now), () => {});
      },
      signal,
    );
    await watcher.waitFor(objects, AbortSignal.any([signal, AbortSignal.timeout(30_000)]));
  } finally {
    await watcher.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  await deleteLabelled(client, namespace, CEILING_LABEL);
  const writes = objects * 3;
  return {
    objects,
    writes,
    concurrency,
    seconds,
    writesPerSecond: writes / seconds,
    idealRunsPerSecond: writes / seconds / 3,
  };
}

async function deleteLabelled(client: KubeClient, namespace: string, label: string): Promise<void> {
  await client
    .delete(path(RunResource, namespace), undefined, { labelSelector: `${BENCH_LABEL}=${label}` })
    .catch(() => {});
}
