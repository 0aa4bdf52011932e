/**
 * The autoscaler's pure decision: how many pods a Runtime wants from its load, and what to do
 * about it given the recent recommendations (scale up at once or after a stabilization window,
 * scale down only after the delay). No I/O and no clock: the reconciler passes `nowMs`.
 */

/** A Runtime's load as the scheduler's cache and queue see it. */
export interface PoolLoad {
  /** What one pod offers (`spec.capacity` with defaults). */
  perPod: Readonly<Record<string, number>>;
  /** Capacity held by placed Runs (sessions' and spent pods count as whole pods). */
  used: Readonly<Record<string, number>>;
  /** Requests of Pending Runs that a pod of this Runtime could take. */
  pending: Readonly<Record<string, number>>;
  pendingRuns: number;
}

export interface ScalePolicy {
  minReplicas: number;
  maxReplicas: number;
  targetUtilization: number;
  scaleUpWindowMs: number;
  scaleDownDelayMs: number;
}

/** One recommendation, as it was computed at `atMs`. */
export interface Recommendation {
  atMs: number;
  replicas: number;
}

export type DecisionReason = "ScaleUp" | "ScaleUpFromZero" | "ScaleDown" | "Steady";

export interface Decision {
  /** What the load alone asks for, clamped to [min, max]. */
  wanted: number;
  /** What to run now after the windows: > current scales up, < current drains pods. */
  desired: number;
  reason: DecisionReason;
  message: string;
  /** When a pending scale-down becomes due (the delay runs out), if one is waiting. */
  recheckAtMs?: number;
}

/** Pods the load needs at the target utilization: the most demanding resource decides. */
export function wantedReplicas(load: PoolLoad, p: ScalePolicy): number {
  let need = 0;
  for (const [name, per] of Object.entries(load.perPod)) {
    if (!(per > 0)) continue;
    const demand = (load.used[name] ?? 0) + (load.pending[name] ?? 0);
    if (demand <= 0) continue;
    // A rounding guard: 5.6 runs at 0.7 × 8 is exactly one pod, not two.
    need = Math.max(need, Math.ceil(demand / (per * p.targetUtilization) - 1e-9));
  }
  return Math.min(p.maxReplicas, Math.max(p.minReplicas, need));
}

/**
 * Recommendations in effect during [from, now]: those made in it, and the last one before it
 * (still in effect when the window opened).
 */
function inWindow(history: readonly Recommendation[], fromMs: number, nowMs: number): number[] {
  const out: number[] = [];
  if (fromMs >= nowMs) return out;
  let before: Recommendation | undefined;
  for (const r of history) {
    if (r.atMs >= fromMs) out.push(r.replicas);
    else before = r;
  }
  if (before) out.push(before.replicas);
  return out;
}

/**
 * The decision for `current` pods given `history` (oldest first, ending with the recommendation
 * made now). Scale up goes to the lowest count wanted during the up window (at once with 0s);
 * scale down to the highest count wanted during the down delay.
 */
export function decide(
  current: number,
  history: readonly Recommendation[],
  load: PoolLoad,
  p: ScalePolicy,
  nowMs: number,
): Decision {
  const wanted = history.at(-1)?.replicas ?? wantedReplicas(load, p);
  const facts = describeLoad(load);
  if (wanted > current) {
    const lowest = Math.min(...inWindow(history, nowMs - p.scaleUpWindowMs, nowMs), wanted);
    const desired = Math.max(current, lowest);
    if (desired > current)
      return {
        wanted,
        desired,
        reason: current === 0 ? "ScaleUpFromZero" : "ScaleUp",
        message: `${current} → ${desired} pods: ${facts}`,
      };
    return {
      wanted,
      desired: current,
      reason: "Steady",
      message: `${wanted} pods wanted, waiting for the scale-up stabilization window: ${facts}`,
    };
  }
  if (wanted < current) {
    const highest = Math.max(...inWindow(history, nowMs - p.scaleDownDelayMs, nowMs), wanted);
    const desired = Math.min(current, highest);
    if (desired < current)
      return { wanted, desired, reason: "ScaleDown", message: `${current} → ${desired} pods: ${facts}` };
    // Due once no recommendation above `wanted` is in effect in the window: one stays in effect
    // until the next one was made.
    let last = nowMs;
    history.forEach((r, i) => {
      if (r.replicas > wanted) last = history[i + 1]?.atMs ?? nowMs;
    });
    return {
      wanted,
      desired: current,
      reason: "Steady",
      message: `${wanted} pods wanted, scaling down after the delay: ${facts}`,
      recheckAtMs: Math.max(nowMs, last + p.scaleDownDelayMs),
    };
  }
  return { wanted, desired: current, reason: "Steady", message: `${current} pods: ${facts}` };
}

/** Keeps what the windows still need: the last recommendation before the longest window, and after. */
export function pruneHistory(history: Recommendation[], p: ScalePolicy, nowMs: number): Recommendation[] {
  const from = nowMs - Math.max(p.scaleUpWindowMs, p.scaleDownDelayMs);
  let i = 0;
  while (i + 1 < history.length && (history[i + 1] as Recommendation).atMs < from) i++;
  // Consecutive equal values say nothing new: keep the first of a run only.
  const out: Recommendation[] = [];
  for (const r of history.slice(i)) if (out.at(-1)?.replicas !== r.replicas) out.push(r);
  return out;
}

function describeLoad(load: PoolLoad): string {
  const parts: string[] = [];
  for (const [name, per] of Object.entries(load.perPod)) {
    if (!(per > 0)) continue;
    parts.push(
      `${name} in use ${fmt(load.used[name] ?? 0)}, pending ${fmt(load.pending[name] ?? 0)} (${fmt(per)} per pod)`,
    );
  }
  return `${parts.join("; ")}; ${load.pendingRuns} Pending Runs`;
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}
