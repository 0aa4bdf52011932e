/**
 * What happens to a Pending Run before any pod is considered: it is scheduled, or it ends at
 * once when `spec.termination` was set before it was placed (Cancelled). Every mode is served:
 * tasks, functions and sessions.
 */
import { Reason, type Run, RunPhase } from "@kruntimes/api";

export type Admission =
  | { readonly kind: "schedule" }
  | { readonly kind: "end"; readonly phase: RunPhase; readonly reason: Reason; readonly message: string };

const SCHEDULE: Admission = { kind: "schedule" };

export function admit(run: Run): Admission {
  if (run.spec.termination?.mode) {
    return {
      kind: "end",
      phase: RunPhase.Cancelled,
      reason: Reason.Cancelled,
      message: `spec.termination.mode ${run.spec.termination.mode} was set before the Run was scheduled`,
    };
  }
  return SCHEDULE;
}
