/**
 * The outcome of a plugin or a cycle, kube-scheduler style: the code says what the queue does
 * with the Run next, the reason is the waiting reason a Pending Run shows.
 */
import type { WaitingReason } from "@kruntimes/api";

export const Code = {
  /** Park the Run until a pod of its Runtime frees capacity or becomes available. */
  Unschedulable: "Unschedulable",
  /** Park the Run until its Runtime changes: no pod as currently specified can ever take it. */
  UnschedulableAndUnresolvable: "UnschedulableAndUnresolvable",
  /** Something broke; retry the Run with backoff. */
  Error: "Error",
} as const;
export type Code = (typeof Code)[keyof typeof Code];

export interface Status {
  readonly code: Code;
  readonly reason: WaitingReason;
  /** Short, bounded text: no object lists. */
  readonly message: string;
  /** The plugin that rejected, or "" for the framework itself. */
  readonly plugin: string;
  /**
   * What the Run waits for, when it is more telling than the per-pod counts (Run affinity:
   * "waiting for a Run matching job=a on the same pod"); it leads the summary message.
   */
  readonly lead?: string;
}

/** Plugins return `undefined` for success, so the per-pod hot path allocates nothing. */
export type Verdict = Status | undefined;

export function rejected(
  plugin: string,
  code: Code,
  reason: WaitingReason,
  message: string,
  lead?: string,
): Status {
  return lead === undefined ? { code, reason, message, plugin } : { code, reason, message, plugin, lead };
}
