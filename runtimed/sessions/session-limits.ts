/** A session Run's `spec.mode.session` with the defaults and maxima of SessionLimits applied. */
import { durationOr, type Run, SessionLimits } from "@kruntimes/api";

export interface SessionBounds {
  /** 0 = never idle out. */
  idleTimeoutMs: number;
  defaultOperationTimeoutMs: number;
  maxOperationTimeoutMs: number;
  maxQueuedOperations: number;
}

export function sessionBounds(run: Run): SessionBounds {
  const m = run.spec.mode.session ?? {};
  const maxOp = Math.min(
    durationOr(m.maxOperationTimeout, SessionLimits.maxOperationTimeoutMs),
    SessionLimits.maxOperationTimeoutMs,
  );
  return {
    idleTimeoutMs: durationOr(m.idleTimeout, 0),
    maxOperationTimeoutMs: maxOp,
    defaultOperationTimeoutMs: Math.min(
      durationOr(m.defaultOperationTimeout, SessionLimits.defaultOperationTimeoutMs),
      maxOp,
    ),
    maxQueuedOperations: Math.min(
      m.maxQueuedOperations ?? SessionLimits.defaultMaxQueuedOperations,
      SessionLimits.maxMaxQueuedOperations,
    ),
  };
}

/** The operation's timeout: asked (0 = the Run's default), capped by the Run's maximum. */
export function operationTimeoutMs(b: SessionBounds, askedMs: number): number {
  return Math.min(askedMs > 0 ? askedMs : b.defaultOperationTimeoutMs, b.maxOperationTimeoutMs);
}
