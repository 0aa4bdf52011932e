/**
 * How an attempt ended, in Run terms: the Runtime Server's TaskExitReason (plus exit code and
 * signal) mapped onto a terminal phase and a Run reason, with a message a user can act on.
 * One table, so the mapping is reviewed in one place.
 */
import { failedVerdict, Reason, RunPhase, type RunSpec } from "@kruntimes/api";
import { type TaskExited, TaskExitReason } from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";

export type TerminalPhase =
  | typeof RunPhase.Succeeded
  | typeof RunPhase.Failed
  | typeof RunPhase.Timeout
  | typeof RunPhase.Cancelled;

export interface Outcome {
  phase: TerminalPhase;
  reason: Reason;
  message: string;
}

/**
 * The outcome a Run ends with when this attempt is not retried: a failure (or timeout) of the
 * last attempt the policy allowed for its reason becomes RetriesExhausted (see failedVerdict).
 */
export function finalOutcome(outcome: Outcome, spec: Pick<RunSpec, "retryPolicy">, attempt: number): Outcome {
  if (outcome.phase !== RunPhase.Failed && outcome.phase !== RunPhase.Timeout) return outcome;
  return { ...outcome, ...failedVerdict(spec, attempt, outcome.reason, outcome.message) };
}

function detail(exited: Pick<TaskExited, "message">, fallback: string): string {
  return exited.message ? exited.message : fallback;
}

export function outcomeOf(exited: Pick<TaskExited, "reason" | "exitCode" | "signal" | "message">): Outcome {
  switch (exited.reason) {
    case TaskExitReason.COMPLETED:
      if (exited.signal)
        return {
          phase: RunPhase.Failed,
          reason: Reason.Signaled,
          message: `the task was killed by ${exited.signal}`,
        };
      if (exited.exitCode === 0)
        return {
          phase: RunPhase.Succeeded,
          reason: Reason.Completed,
          message: "the task exited with code 0",
        };
      return {
        phase: RunPhase.Failed,
        reason: Reason.NonZeroExit,
        message: `the task exited with code ${exited.exitCode ?? "unknown"}`,
      };
    case TaskExitReason.TIMEOUT:
      return {
        phase: RunPhase.Timeout,
        reason: Reason.Timeout,
        message: detail(exited, "the attempt ran past spec.timeout"),
      };
    case TaskExitReason.CANCELLED:
      return {
        phase: RunPhase.Cancelled,
        reason: Reason.Cancelled,
        message: detail(exited, "cancelled by spec.termination.mode: Immediate"),
      };
    case TaskExitReason.OUTPUTS_INVALID:
      return {
        phase: RunPhase.Failed,
        reason: Reason.OutputsInvalid,
        message: detail(exited, "the task's outputs broke the outputs limits"),
      };
    case TaskExitReason.START_FAILED:
      return {
        phase: RunPhase.Failed,
        reason: Reason.StartFailed,
        message: detail(exited, "the Runtime Server could not start the task"),
      };
    default:
      // INTERNAL (or a reason this runtimed does not know): the pod failed, not the code.
      return {
        phase: RunPhase.Failed,
        reason: Reason.PodUnhealthy,
        message: `the Runtime Server failed while running the task: ${detail(exited, "no detail given")}`,
      };
  }
}

/** An attempt whose execution vanished (runtimed or the Runtime Server restarted under it). */
export function lostOutcome(message: string): Outcome {
  return { phase: RunPhase.Failed, reason: Reason.PodUnhealthy, message };
}
