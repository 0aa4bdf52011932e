/**
 * How a registration's end maps onto the Run, in one table. Who asked for the end matters:
 * CANCELLED after our own Unregister is the Run's cancel or timeout; CANCELLED or DRAINED that
 * runtimed did not ask for means the registration was lost (server drained or replaced), which is
 * re-registered under the same attempt, not a terminal state.
 */
import { Reason, RunPhase } from "@kruntimes/api";
import {
  FunctionEndReason,
  type FunctionRegistration,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import type { Outcome } from "../status/outcome.ts";

/** Why runtimed itself ended the registration (absent: it did not). */
export type EndIntent = "cancel" | "timeout" | "delete";

export type EndVerdict = { kind: "terminal"; outcome: Outcome } | { kind: "lost"; why: string };

function idleText(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** The Runtime's server does not implement the mode (a custom server with tasks only, say). */
export function modeNotSupported(mode: "function" | "session"): Outcome {
  return {
    phase: RunPhase.Failed,
    reason: Reason.ModeNotSupported,
    message: `this Runtime's server does not implement ${mode} mode (its RuntimeService.Info lists the modes it serves); use a Runtime whose server does`,
  };
}

export function registrationFailed(error: string): Outcome {
  return {
    phase: RunPhase.Failed,
    reason: Reason.RegistrationFailed,
    message: `the function could not be registered: ${error || "no error reported"}`,
  };
}

export function cancelledOutcome(): Outcome {
  return {
    phase: RunPhase.Cancelled,
    reason: Reason.Cancelled,
    message: "cancelled by spec.termination.mode: Immediate; in-flight invocations were cancelled",
  };
}

export function timeoutOutcome(timeoutMs: number): Outcome {
  return {
    phase: RunPhase.Timeout,
    reason: Reason.Timeout,
    message: `the function Run reached spec.timeout (${idleText(timeoutMs)} of lifetime) and was unregistered`,
  };
}

export function endVerdict(
  r: Pick<FunctionRegistration, "endReason" | "error" | "limits" | "invocations">,
  intent: EndIntent | undefined,
  timeoutMs: number,
): EndVerdict {
  if (intent === "cancel") return { kind: "terminal", outcome: cancelledOutcome() };
  if (intent === "timeout") return { kind: "terminal", outcome: timeoutOutcome(timeoutMs) };
  switch (r.endReason) {
    case FunctionEndReason.IDLE_TIMEOUT:
      return {
        kind: "terminal",
        outcome: {
          phase: RunPhase.Succeeded,
          reason: Reason.IdleTimeout,
          message: `no invocation arrived for ${idleText(r.limits?.idleTimeoutMs ?? 0)} (idleTimeout); ${r.invocations} invocations served`,
        },
      };
    case FunctionEndReason.REGISTRATION_FAILED:
      return { kind: "terminal", outcome: registrationFailed(r.error) };
    case FunctionEndReason.DRAINED:
      return { kind: "lost", why: "the Runtime Server drained the registration" };
    case FunctionEndReason.CANCELLED:
      return { kind: "lost", why: "the Runtime Server cancelled the registration" };
    default:
      return {
        kind: "lost",
        why: `the registration ended (${FunctionEndReason[r.endReason] ?? r.endReason})`,
      };
  }
}
