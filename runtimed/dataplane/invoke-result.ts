/** The bounded `result` label of an invocation, from its answer or its error (one table). */
import { Code, type ConnectError } from "@connectrpc/connect";
import {
  type InvokeFailure,
  InvokeFailure_Reason,
  InvokeFailureSchema,
  type InvokeResponse,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import type { InvocationResult } from "../metrics.ts";

const BY_REASON: Partial<Record<InvokeFailure_Reason, InvocationResult>> = {
  [InvokeFailure_Reason.NOT_REGISTERED]: "not_ready",
  [InvokeFailure_Reason.STALE]: "stale_route",
  [InvokeFailure_Reason.NOT_READY]: "not_ready",
  [InvokeFailure_Reason.BUSY]: "busy",
  [InvokeFailure_Reason.REQUEST_TOO_LARGE]: "request_too_large",
  [InvokeFailure_Reason.RESPONSE_TOO_LARGE]: "response_too_large",
  [InvokeFailure_Reason.TIMEOUT]: "timeout",
  [InvokeFailure_Reason.WORKER_CRASHED]: "worker_crashed",
  [InvokeFailure_Reason.CANCELLED]: "cancelled",
};

const BY_CODE: Partial<Record<Code, InvocationResult>> = {
  [Code.Unauthenticated]: "unauthenticated",
  [Code.PermissionDenied]: "permission_denied",
  [Code.FailedPrecondition]: "stale_route",
  [Code.Unavailable]: "unavailable",
  [Code.DeadlineExceeded]: "timeout",
  [Code.ResourceExhausted]: "busy",
  [Code.Canceled]: "cancelled",
};

export function resultOfResponse(r: InvokeResponse): InvocationResult {
  return r.handlerError ? "handler_error" : "ok";
}

export function resultOfError(e: ConnectError): InvocationResult {
  const failure = e.findDetails(InvokeFailureSchema)[0] as InvokeFailure | undefined;
  if (failure) return BY_REASON[failure.reason] ?? "error";
  return BY_CODE[e.code] ?? "error";
}
