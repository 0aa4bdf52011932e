/**
 * Pure parts of the scale benchmark: Run phases counted from watch events (no listing of
 * thousands of objects per sample), the per-second samples, and what they add up to — throughput
 * overall and at steady state, the scheduler's busy share, pending Runs that fitted free
 * capacity, CPU shares by process group, and the compact table of the report.
 */
import { percentile } from "../hotpath/stats.ts";

/** Busy CPU of the machine no process scan saw: processes that came and went between scans, the kernel. */
export const UNATTRIBUTED = "unattributed (short-lived processes, kernel)";

export type Bucket = "pending" | "running" | "succeeded" | "failed";
export type Counts = Record<Bucket, number>;

const RUNNING = new Set(["Scheduled", "Running", "Ready", "Finalizing"]);
const FAILED = new Set(["Failed", "Timeout", "Cancelled"]);

/** Where a Run of this phase counts: Pending (or no status yet), placed and not ended, or ended. */
export function bucketOf(phase: string | undefined): Bucket {
  if (phase === "Succeeded") return "succeeded";
  if (phase !== undefined && FAILED.has(phase)) return "failed";
  if (phase !== undefined && RUNNING.has(phase)) return "running";
  return "pending";
}

/**
 * Counts by bucket, kept up to date per watch event in O(1). A terminal phase is final: a Run
 * seen ended whose phase then changes is recorded in `flips` (`<name>: <phase> → <phase>`).
 */
export class PhaseTally {
  private readonly byName = new Map<string, Bucket>();
  private readonly phases = new Map<string, string>();
  readonly counts: Counts = { pending: 0, running: 0, succeeded: 0, failed: 0 };
  readonly flips: string[] = [];

  /** Records the Run's phase; returns its bucket when it changed (undefined when not). */
  set(name: string, phase: string | undefined): Bucket | undefined {
    const b = bucketOf(phase);
    const old = this.byName.get(name);
    const oldPhase = this.phases.get(name);
    if (phase !== undefined) this.phases.set(name, phase);
    if ((old === "succeeded" || old === "failed") && oldPhase !== phase)
      this.flips.push(`${name}: ${oldPhase} → ${phase ?? "(none)"}`);
    if (old === b) return undefined;
    if (old) this.counts[old]--;
    this.counts[b]++;
    this.byName.set(name, b);
    return b;
  }

  remove(name: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.counts[old]--;
    this.byName.delete(name);
    this.phases.delete(name);
  }

  get seen(): number {
    return this.byName.size;
  }
  bucket(name: string): Bucket | undefined {
    return this.byName.get(name);
  }
  snapshot(): Counts {
    return { ...this.counts };
  }
}

/** One sample, every value cumulative or instantaneous as named. */
export interface Sample {
  /** Seconds since the first create. */
  t: number;
  created: number;
  counts: Counts;
  controller: { rssBytes: number; heapBytes: number };
  scheduler: {
    active: number;
    parked: number;
    backoff: number;
    bindsInFlight: number;
    pendingThatFits: number;
    /** Slots the scheduler counts as held (confirmed and assumed placements), kruntimes_scheduler_capacity_held{resource="runs"}. */
    held: number;
    /** Binds not yet confirmed by the controller's watch. */
    assumed: number;
    /** kruntimes_scheduler_cycle_duration_seconds_sum over results (cumulative). */
    cycleSeconds: number;
    cycles: number;
    /** kruntimes_scheduler_bind_duration_seconds sum and count (cumulative). */
    bindSeconds: number;
    binds: number;
  };
  /** CPU seconds per process group since the start (cumulative). */
  cpu: Record<string, number>;
  /** RSS per process group (summed over its processes), bytes. */
  rss: Record<string, number>;
  /** Whole machine: busy CPU seconds and wall × cores since the start (from /proc/stat). */
  machine: { busySeconds: number; totalSeconds: number };
}

/** Prometheus text → value of `name` (labels exact, or summed over every series of the name when `labels` is "*"). */
export function metricValue(text: string, name: string, labels = ""): number {
  let sum = 0;
  let found = false;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (labels === "*") {
      if (rest[0] !== "{" && rest[0] !== " ") continue;
    } else if (!rest.startsWith(labels ? `{${labels}} ` : " ")) continue;
    const v = Number(rest.slice(rest.lastIndexOf(" ") + 1));
    if (Number.isFinite(v)) {
      sum += v;
      found = true;
    }
  }
  return found ? sum : 0;
}

/**
 * Prometheus text → sum of the series of `name` by the values of `keys` (joined with "/"), only
 * series whose labels include every pair in `where`.
 */
export function sumBy(
  text: string,
  name: string,
  keys: readonly string[],
  where: Readonly<Record<string, string>> = {},
): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const close = line.lastIndexOf("}");
    const labels: Record<string, string> = {};
    for (const m of line
      .slice(name.length + 1, close)
      .matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1] as string] = m[2] as string;
    if (Object.entries(where).some(([k, v]) => labels[k] !== v)) continue;
    const v = Number(line.slice(close + 1).trim());
    if (!Number.isFinite(v)) continue;
    const key = keys.map((k) => labels[k] ?? "").join("/");
    out.set(key, (out.get(key) ?? 0) + v);
  }
  return out;
}

/** after − before per key (keys only in `after` count from 0), zero differences dropped. */
export function diffBy(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>) {
  const out = new Map<string, number>();
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d !== 0) out.set(k, d);
  }
  return out;
}

/** The scheduler's part of a sample, from the controller's /metrics. */
export function schedulerFromMetrics(text: string): Sample["scheduler"] {
  const q = (queue: string) => metricValue(text, "kruntimes_scheduler_queue_depth", `queue="${queue}"`);
  return {
    active: q("active"),
    parked: q("parked"),
    backoff: q("backoff"),
    bindsInFlight: metricValue(text, "kruntimes_scheduler_binds_in_flight"),
    pendingThatFits: metricValue(text, "kruntimes_scheduler_pending_fitting_runs"),
    held: metricValue(text, "kruntimes_scheduler_capacity_held", 'resource="runs"'),
    assumed: metricValue(text, "kruntimes_scheduler_assumed_runs"),
    cycleSeconds: metricValue(text, "kruntimes_scheduler_cycle_duration_seconds_sum", "*"),
    cycles: metricValue(text, "kruntimes_scheduler_cycle_duration_seconds_count", "*"),
    bindSeconds: metricValue(text, "kruntimes_scheduler_bind_duration_seconds_sum", "*"),
    binds: metricValue(text, "kruntimes_scheduler_bind_duration_seconds_count", "*"),
  };
}

/** The time `value(s)` first reached `target`, interpolated linearly between samples. */
export function timeReaching(samples: readonly Sample[], value: (s: Sample) => number, target: number) {
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as Sample;
    const v = value(s);
    if (v < target) continue;
    const p = samples[i - 1];
    if (!p) return s.t;
    const pv = value(p);
    return v === pv ? s.t : p.t + ((target - pv) / (v - pv)) * (s.t - p.t);
  }
  return undefined;
}

/** Nearest-rank quantile (q in 0..1) of `sorted`: krt bench's `percentile`, on a 0..1 scale. */
export const quantile = (sorted: readonly number[], q: number): number => percentile(sorted, q * 100);

export interface Summary {
  runs: number;
  /** Seconds from the first create until every Run had ended (or the last sample). */
  wallSeconds: number;
  createSeconds: number;
  throughput: number;
  /** Runs/s between 10 % and 90 % Succeeded. */
  steadyThroughput: number;
  steadyWindow: [number, number];
  /** Mean Runs placed and not ended (Scheduled/Running) in the steady window: slots in use. */
  meanInFlight: number;
  /** Mean slots the scheduler counted as held in the steady window (its view, incl. binds in flight). */
  meanHeld: number;
  /** Mean binds done but not yet shown by the controller's watch (assumed) in the steady window. */
  meanAssumed: number;
  /** Little's law: mean assumed ÷ steady throughput = from a bind's response to the controller's watch showing it, s. */
  confirmLagSeconds: number;
  /** Little's law: mean in flight ÷ steady throughput = how long a Run holds a slot, s. */
  slotHoldSeconds: number;
  maxPending: number;
  controllerRssMax: number;
  controllerHeapMax: number;
  scheduler: {
    cycles: number;
    cycleSeconds: number;
    /** cycle seconds ÷ wall seconds. */
    busyShare: number;
    meanCycleMicros: number;
    /** Largest busy share in one sampling interval. */
    maxIntervalBusyShare: number;
    pendingThatFitsMax: number;
    /** Share of samples (while Runs were Pending) with pendingThatFits > 0. */
    pendingThatFitsNonZeroShare: number;
    /** … of those, with bind slots free: the scheduler itself lagged (not waiting for the apiserver). */
    fitsWhileBindSlotsFreeShare: number;
    /** Share of samples (while Runs were Pending) with every bind slot in use. */
    bindSlotsFullShare: number;
    bindsInFlightMax: number;
    meanBindMs: number;
  };
  /** CPU seconds per group over the whole window, and its share of one core. */
  cpu: { group: string; seconds: number; coreShare: number }[];
  machineBusyShare: number;
}

/** Sums up the samples of one burst of `runs` Runs (`bindConcurrency`: the controller's bind slots). */
export function summarize(samples: readonly Sample[], runs: number, bindConcurrency = 32): Summary {
  const first = samples[0];
  const last = samples.at(-1);
  if (!first || !last) throw new Error("no samples");
  const done = (s: Sample) => s.counts.succeeded + s.counts.failed;
  const end = timeReaching(samples, done, runs) ?? last.t;
  const createdAll = timeReaching(samples, (s) => s.created, runs) ?? last.t;
  const t10 = timeReaching(samples, (s) => s.counts.succeeded, 0.1 * runs);
  const t90 = timeReaching(samples, (s) => s.counts.succeeded, 0.9 * runs);
  const steady = t10 !== undefined && t90 !== undefined && t90 > t10 ? (0.8 * runs) / (t90 - t10) : 0;
  const inWindow = samples.filter((s) => t10 !== undefined && t90 !== undefined && s.t >= t10 && s.t <= t90);
  const meanInFlight =
    inWindow.length > 0 ? inWindow.reduce((a, s) => a + s.counts.running, 0) / inWindow.length : 0;
  const meanHeld =
    inWindow.length > 0 ? inWindow.reduce((a, s) => a + s.scheduler.held, 0) / inWindow.length : 0;
  const meanAssumed =
    inWindow.length > 0 ? inWindow.reduce((a, s) => a + s.scheduler.assumed, 0) / inWindow.length : 0;
  const sched = last.scheduler;
  const base = first.scheduler;
  const cycleSeconds = sched.cycleSeconds - base.cycleSeconds;
  const cycles = sched.cycles - base.cycles;
  const wall = Math.max(1e-9, last.t - first.t);
  let maxInterval = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] as Sample;
    const b = samples[i] as Sample;
    if (b.t > a.t)
      maxInterval = Math.max(
        maxInterval,
        (b.scheduler.cycleSeconds - a.scheduler.cycleSeconds) / (b.t - a.t),
      );
  }
  const whilePending = samples.filter((s) => s.counts.pending > 0 || s.created < runs);
  const binds = sched.binds - base.binds;
  const groups = new Set([...Object.keys(last.cpu), ...Object.keys(first.cpu)]);
  const cpu = [...groups]
    .map((group) => {
      const seconds = (last.cpu[group] ?? 0) - (first.cpu[group] ?? 0);
      return { group, seconds, coreShare: seconds / wall };
    })
    .sort((x, y) => y.seconds - x.seconds);
  const machineTotal = last.machine.totalSeconds - first.machine.totalSeconds;
  const machineBusy = last.machine.busySeconds - first.machine.busySeconds;
  const attributed = cpu.reduce((x, c) => x + c.seconds, 0);
  if (machineTotal > 0 && machineBusy - attributed > 0)
    cpu.push({
      group: UNATTRIBUTED,
      seconds: machineBusy - attributed,
      coreShare: (machineBusy - attributed) / wall,
    });
  return {
    runs,
    wallSeconds: end,
    createSeconds: createdAll,
    throughput: end > 0 ? runs / end : 0,
    steadyThroughput: steady,
    steadyWindow: [t10 ?? Number.NaN, t90 ?? Number.NaN],
    meanInFlight,
    meanHeld,
    meanAssumed,
    confirmLagSeconds: steady > 0 ? meanAssumed / steady : Number.NaN,
    slotHoldSeconds: steady > 0 ? meanInFlight / steady : Number.NaN,
    maxPending: Math.max(...samples.map((s) => s.counts.pending)),
    controllerRssMax: Math.max(...samples.map((s) => s.controller.rssBytes)),
    controllerHeapMax: Math.max(...samples.map((s) => s.controller.heapBytes)),
    scheduler: {
      cycles,
      cycleSeconds,
      busyShare: cycleSeconds / wall,
      meanCycleMicros: cycles > 0 ? (1e6 * cycleSeconds) / cycles : 0,
      maxIntervalBusyShare: maxInterval,
      pendingThatFitsMax: Math.max(...samples.map((s) => s.scheduler.pendingThatFits)),
      pendingThatFitsNonZeroShare: share(whilePending, (s) => s.scheduler.pendingThatFits > 0),
      fitsWhileBindSlotsFreeShare: share(
        whilePending,
        (s) => s.scheduler.pendingThatFits > 0 && s.scheduler.bindsInFlight < bindConcurrency,
      ),
      bindSlotsFullShare: share(whilePending, (s) => s.scheduler.bindsInFlight >= bindConcurrency),
      bindsInFlightMax: Math.max(...samples.map((s) => s.scheduler.bindsInFlight)),
      meanBindMs: binds > 0 ? (1000 * (sched.bindSeconds - base.bindSeconds)) / binds : 0,
    },
    cpu,
    machineBusyShare: machineTotal > 0 ? machineBusy / machineTotal : 0,
  };
}

function share<T>(xs: readonly T[], p: (x: T) => boolean): number {
  return xs.length > 0 ? xs.filter(p).length / xs.length : 0;
}

/** One row of the compact table: the sample at the end of each `everySeconds` interval, with rates over it. */
export interface TableRow {
  t: number;
  created: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  /** Runs ended per second over the interval. */
  rate: number;
  queue: string;
  pendingThatFits: number;
  bindsInFlight: number;
  held: number;
  /** Scheduler busy share over the interval (cycle seconds ÷ wall). */
  schedBusy: number;
  controllerRssMiB: number;
  /** CPU share of one core per group over the interval. */
  cpu: Record<string, number>;
  machineBusy: number;
}

export function compactRows(samples: readonly Sample[], everySeconds: number): TableRow[] {
  const out: TableRow[] = [];
  let prev = samples[0];
  if (!prev) return out;
  let nextT = prev.t + everySeconds;
  for (let i = 1; i < samples.length; i++) {
    const s = samples[i] as Sample;
    if (s.t + 1e-6 < nextT && i !== samples.length - 1) continue;
    const dt = Math.max(1e-9, s.t - prev.t);
    const cpu: Record<string, number> = {};
    for (const g of Object.keys(s.cpu)) cpu[g] = ((s.cpu[g] ?? 0) - (prev.cpu[g] ?? 0)) / dt;
    const dm = s.machine.totalSeconds - prev.machine.totalSeconds;
    out.push({
      t: s.t,
      created: s.created,
      pending: s.counts.pending,
      running: s.counts.running,
      succeeded: s.counts.succeeded,
      failed: s.counts.failed,
      rate: (s.counts.succeeded + s.counts.failed - prev.counts.succeeded - prev.counts.failed) / dt,
      queue: `${s.scheduler.active}/${s.scheduler.parked}/${s.scheduler.backoff}`,
      pendingThatFits: s.scheduler.pendingThatFits,
      bindsInFlight: s.scheduler.bindsInFlight,
      held: s.scheduler.held,
      schedBusy: (s.scheduler.cycleSeconds - prev.scheduler.cycleSeconds) / dt,
      controllerRssMiB: s.controller.rssBytes / 1024 / 1024,
      cpu,
      machineBusy: dm > 0 ? (s.machine.busySeconds - prev.machine.busySeconds) / dm : 0,
    });
    prev = s;
    nextT = s.t + everySeconds;
  }
  return out;
}
