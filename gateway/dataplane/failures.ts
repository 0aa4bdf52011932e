/**
 * What a failed dataplane call means for the caller, as one pure table: a refused fence or a pod
 * that cannot be reached is `stale` (re-resolve the route once); the Runtime Server's own
 * InvokeFailure reasons become the gateway's error reasons; anything else is Internal.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type RouteFailure,
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import {
  type InvokeFailure,
  InvokeFailure_Reason,
  InvokeFailureSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import { ErrorReason, GatewayError } from "../errors.ts";

export type DataplaneFailure = { kind: "stale"; why: string } | { kind: "error"; error: GatewayError };

const BY_REASON: Partial<Record<InvokeFailure_Reason, ErrorReason>> = {
  [InvokeFailure_Reason.BUSY]: ErrorReason.FunctionBusy,
  [InvokeFailure_Reason.REQUEST_TOO_LARGE]: ErrorReason.RequestTooLarge,
  [InvokeFailure_Reason.RESPONSE_TOO_LARGE]: ErrorReason.ResponseTooLarge,
  [InvokeFailure_Reason.TIMEOUT]: ErrorReason.Deadline,
  [InvokeFailure_Reason.WORKER_CRASHED]: ErrorReason.WorkerCrashed,
  [InvokeFailure_Reason.CANCELLED]: ErrorReason.Cancelled,
  [InvokeFailure_Reason.INVALID]: ErrorReason.InvalidArgument,
};

/** Reasons that say "not here (any more)": the route is re-resolved. */
const STALE_REASONS = new Set([
  InvokeFailure_Reason.NOT_REGISTERED,
  InvokeFailure_Reason.STALE,
  InvokeFailure_Reason.NOT_READY,
]);

export function classifyDataplaneError(e: unknown): DataplaneFailure {
  const err = ConnectError.from(e);
  const route = err.findDetails(RouteFailureSchema)[0] as RouteFailure | undefined;
  if (route)
    return { kind: "stale", why: `runtimed refused the route: ${RouteFailure_Reason[route.reason]}` };
  const failure = err.findDetails(InvokeFailureSchema)[0] as InvokeFailure | undefined;
  if (failure) {
    if (STALE_REASONS.has(failure.reason)) {
      return { kind: "stale", why: `the Runtime Server answered ${InvokeFailure_Reason[failure.reason]}` };
    }
    const reason = BY_REASON[failure.reason] ?? ErrorReason.Internal;
    const retryAfterSeconds =
      failure.retryAfterMs > 0 ? Math.max(1, Math.ceil(failure.retryAfterMs / 1000)) : undefined;
    return {
      kind: "error",
      error: new GatewayError(reason, err.rawMessage, { retryAfterSeconds, cause: err }),
    };
  }
  switch (err.code) {
    case Code.Unavailable:
      return { kind: "stale", why: err.rawMessage };
    case Code.Unknown:
    case Code.Internal:
      // No Connect answer at all (connection refused or reset): the pod is gone or moving.
      if (!err.metadata.has("content-type")) return { kind: "stale", why: err.rawMessage };
      break;
    case Code.DeadlineExceeded:
      return {
        kind: "error",
        error: new GatewayError(ErrorReason.Deadline, "the call's deadline passed", { cause: err }),
      };
    case Code.Canceled:
      return {
        kind: "error",
        error: new GatewayError(ErrorReason.Cancelled, "the call was cancelled", { cause: err }),
      };
    case Code.Unauthenticated:
    case Code.PermissionDenied:
      return {
        kind: "error",
        error: new GatewayError(
          ErrorReason.Internal,
          `runtimed refused the gateway's dataplane token (${err.rawMessage}); check --dataplane-token-file and the controller's --dataplane-subjects`,
          { cause: err },
        ),
      };
  }
  return {
    kind: "error",
    error: new GatewayError(ErrorReason.Internal, `runtimed answered ${Code[err.code]}: ${err.rawMessage}`, {
      cause: err,
    }),
  };
}
