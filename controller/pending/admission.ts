/**
 * What happens to a Pending Run before any pod is considered: it is scheduled, or it ends at
 * once — cancelled (`spec.termination` set) or failed because its mode is not served yet
 * (sessions; tasks and functions are).
 */
import { Reason, type Run, RunMode, RunPhase, runModeOf } from "@kruntimes/api";

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
  const mode = runModeOf(run.spec);
  if (mode !== RunMode.Task && mode !== RunMode.Function) {
    return {
      kind: "end",
      phase: RunPhase.Failed,
      reason: Reason.ModeNotSupported,
      message: `${mode} mode is not served by this version of kruntimes yet; task and function Runs are served`,
    };
  }
  return SCHEDULE;
}
