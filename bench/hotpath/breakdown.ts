/**
 * The per-Run latency breakdown, exactly from the Run's microsecond timing plus the moment the
 * benchmark's watch saw the terminal status:
 * schedule (created→scheduled), dispatch (scheduled→started), execution (started→finished),
 * report (finished→reported), observe (reported→seen), complete (created→seen). Two parts are
 * shown on their own: `create` (created→the create's response, the start of schedule) and
 * `bind-seen` (scheduled→the benchmark's watch sees the bind, the start of dispatch: about when
 * runtimed's watch can see it too).
 */
import { Annotations, type Run } from "@kruntimes/api";
import { maxOverlap, maxWaitingAtCapacity, type Summary, summarize } from "./stats.ts";

export const STAGES = [
  "create",
  "schedule",
  "bind-seen",
  "dispatch",
  "execution",
  "report",
  "observe",
  "complete",
] as const;
export type Stage = (typeof STAGES)[number];

/** A finished Run as the benchmark saw it. */
export interface RunSample {
  run: Run;
  /** Wall-clock µs at which the watch event with the terminal status arrived. */
  seenMicros: number;
  /** Wall-clock µs at which the create's response arrived, when known. */
  ackMicros?: number;
  /** Wall-clock µs at which the benchmark's watch first saw the Run bound to a pod. */
  boundSeenMicros?: number;
}

export interface RunTimes {
  created: number;
  acked?: number;
  scheduled?: number;
  boundSeen?: number;
  started?: number;
  finished?: number;
  reported?: number;
  seen: number;
}

export function runTimes(s: RunSample): RunTimes | undefined {
  const t = s.run.status?.timing ?? {};
  const created = t.createdMicros ?? Number(s.run.metadata.annotations?.[Annotations.createdMicros]);
  if (!Number.isFinite(created)) return undefined;
  return {
    created,
    acked: s.ackMicros,
    scheduled: t.scheduledMicros,
    boundSeen: s.boundSeenMicros,
    started: t.startedMicros,
    finished: t.finishedMicros,
    reported: t.reportedMicros,
    seen: s.seenMicros,
  };
}

/** Each stage in µs; a stage whose endpoints are missing is absent. */
export function stagesOf(t: RunTimes): Partial<Record<Stage, number>> {
  const span = (a?: number, b?: number) => (a !== undefined && b !== undefined ? b - a : undefined);
  const out: Partial<Record<Stage, number>> = {
    create: span(t.created, t.acked),
    schedule: span(t.created, t.scheduled),
    "bind-seen": span(t.scheduled, t.boundSeen),
    dispatch: span(t.scheduled, t.started),
    execution: span(t.started, t.finished),
    report: span(t.finished, t.reported),
    observe: span(t.reported, t.seen),
    complete: span(t.created, t.seen),
  };
  for (const k of STAGES) if (out[k] === undefined) delete out[k];
  return out;
}

export interface Breakdown {
  /** Per stage, in milliseconds. */
  stages: Record<Stage, Summary>;
  /** Runs per second from the first create to the last terminal event seen. */
  throughput: number;
  wallSeconds: number;
  /** Most Runs executing (started→finished) at one instant. */
  maxConcurrent: number;
  /** Most Runs created but not yet scheduled at one instant. */
  maxPending: number;
  /** Most Runs waiting while every slot was held (scheduled → reported): waiting for capacity, not for the scheduler. */
  pendingAtCapacity: number;
  succeeded: number;
  failed: number;
}

/** `capacity`: slots of the pool (pods × slots per pod). */
export function breakdown(samples: readonly RunSample[], capacity: number): Breakdown {
  const times = samples.map(runTimes).filter((t): t is RunTimes => t !== undefined);
  const per: Record<Stage, number[]> = {
    create: [],
    schedule: [],
    "bind-seen": [],
    dispatch: [],
    execution: [],
    report: [],
    observe: [],
    complete: [],
  };
  for (const t of times) {
    const st = stagesOf(t);
    for (const k of STAGES) if (st[k] !== undefined) per[k].push((st[k] as number) / 1000);
  }
  const stages = Object.fromEntries(STAGES.map((k) => [k, summarize(per[k])])) as Record<Stage, Summary>;
  const first = Math.min(...times.map((t) => t.created));
  const last = Math.max(...times.map((t) => t.seen));
  const wallSeconds = times.length ? (last - first) / 1e6 : 0;
  const waits = times.map((t) => [t.created, t.scheduled ?? t.seen] as const);
  const succeeded = samples.filter((s) => s.run.status?.phase === "Succeeded").length;
  return {
    stages,
    throughput: wallSeconds > 0 ? times.length / wallSeconds : 0,
    wallSeconds,
    maxConcurrent: maxOverlap(
      times
        .filter((t) => t.started !== undefined && t.finished !== undefined)
        .map((t) => [t.started as number, t.finished as number] as const),
    ),
    maxPending: maxOverlap(waits),
    pendingAtCapacity: maxWaitingAtCapacity(
      times
        .filter((t) => t.scheduled !== undefined)
        .map((t) => [t.scheduled as number, t.reported ?? t.finished ?? t.seen] as const),
      waits,
      capacity,
    ),
    succeeded,
    failed: samples.length - succeeded,
  };
}
