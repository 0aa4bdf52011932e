/**
 * The result state machine of one probe, as kubelet's prober worker keeps it: a raw result changes
 * the reported one only after `successThreshold` successes or `failureThreshold` failures in a row.
 * Readiness starts as failure (not ready until proven), liveness as success, startup as unknown.
 * A reported liveness or startup failure puts the probe on hold until the next container attempt.
 */
import type { Probe } from "../api/types.ts";

export type ProbeKind = "readiness" | "liveness" | "startup";
export type ProbeResult = "success" | "failure" | "unknown";

export interface ProbeTiming {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** API defaults: period 10 s, timeout 1 s, success 1 (always 1 for liveness/startup), failure 3. */
export function probeTiming(kind: ProbeKind, p: Probe): ProbeTiming {
  return {
    initialDelayMs: (p.initialDelaySeconds ?? 0) * 1000,
    periodMs: Math.max(1, p.periodSeconds ?? 10) * 1000,
    timeoutMs: Math.max(1, p.timeoutSeconds ?? 1) * 1000,
    successThreshold: kind === "readiness" ? Math.max(1, p.successThreshold ?? 1) : 1,
    failureThreshold: Math.max(1, p.failureThreshold ?? 3),
  };
}

export class ProbeState {
  private reported: ProbeResult;
  private last: ProbeResult = "unknown";
  private run = 0;
  /** True once a liveness/startup failure was reported: probing stops until the restart. */
  onHold = false;

  constructor(
    readonly kind: ProbeKind,
    readonly timing: ProbeTiming,
  ) {
    this.reported = kind === "readiness" ? "failure" : kind === "liveness" ? "success" : "unknown";
  }

  get result(): ProbeResult {
    return this.reported;
  }

  /** Feeds one raw probe outcome; returns true when the reported result changed. */
  observe(ok: boolean): boolean {
    if (this.onHold) return false;
    const r: ProbeResult = ok ? "success" : "failure";
    this.run = r === this.last ? this.run + 1 : 1;
    this.last = r;
    const threshold = ok ? this.timing.successThreshold : this.timing.failureThreshold;
    if (this.run < threshold) return false;
    const changed = this.reported !== r;
    this.reported = r;
    if (!ok && this.kind !== "readiness") {
      this.onHold = true;
      this.run = 0;
    }
    return changed;
  }

  /** The container stopped: readiness drops at once (kubelet reports not ready for exited containers). */
  containerStopped(): boolean {
    if (this.kind !== "readiness" || this.reported === "failure") return false;
    this.reported = "failure";
    this.run = 0;
    return true;
  }
}
