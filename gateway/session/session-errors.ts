/**
 * What a failed session call to runtimed means for the caller, as one pure table:
 *
 * - a refused fence (RouteFailure) or a pod that cannot be reached → `stale`: re-resolve once;
 * - RESOURCE_EXHAUSTED from runtimed (the session's FIFO queue is full, "session busy") → 429
 *   SessionBusy with runtimed's Retry-After (header or detail), at least 1 s;
 * - UNAUTHENTICATED from runtimed means runtimed refused the gateway's dataplane token → Internal;
 * - every other answer of runtimed (NOT_FOUND for a missing file, INVALID_ARGUMENT for a bad page
 *   token, PERMISSION_DENIED for a path outside the workspace, ALREADY_EXISTS, DEADLINE_EXCEEDED
 *   for an operation timeout…) is the session's own answer and passes through with its code,
 *   message and details.
 *
 * Also the HTTP status of a Connect code on the plain file routes.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { FailureSchema } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { InvokeFailureSchema } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import { codeName, ErrorReason, GatewayError } from "../errors.ts";

export type SessionFailure =
  | { kind: "stale"; why: string }
  | { kind: "error"; error: GatewayError | ConnectError };

export function classifySessionError(e: unknown): SessionFailure {
  if (e instanceof GatewayError) return { kind: "error", error: e };
  const err = ConnectError.from(e);
  const route = err.findDetails(RouteFailureSchema)[0];
  if (route)
    return { kind: "stale", why: `runtimed refused the route: ${RouteFailure_Reason[route.reason]}` };
  const answered = err.metadata.has("content-type");
  switch (err.code) {
    case Code.Unavailable:
      return { kind: "stale", why: err.rawMessage };
    case Code.Unknown:
    case Code.Internal:
      // No Connect answer at all (connection refused or reset): the pod is gone or moving.
      if (!answered) return { kind: "stale", why: err.rawMessage };
      break;
    case Code.ResourceExhausted:
      return {
        kind: "error",
        error: new GatewayError(ErrorReason.SessionBusy, err.rawMessage || "the session's queue is full", {
          retryAfterSeconds: retryAfterOf(err),
          cause: err,
        }),
      };
    case Code.Unauthenticated:
      return {
        kind: "error",
        error: new GatewayError(
          ErrorReason.Internal,
          `runtimed refused the gateway's dataplane token (${err.rawMessage}); check --dataplane-token-file and the controller's --dataplane-subjects`,
          { cause: err },
        ),
      };
    case Code.Canceled:
      return {
        kind: "error",
        error: new GatewayError(ErrorReason.Cancelled, "the call was cancelled", { cause: err }),
      };
  }
  return {
    kind: "error",
    error: new ConnectError(err.rawMessage, err.code, filtered(err.metadata), err.details as never),
  };
}

/** runtimed's Retry-After: its header, else a Failure / InvokeFailure detail; at least 1 s. */
function retryAfterOf(err: ConnectError): number {
  const header = Number(err.metadata.get("retry-after") ?? "");
  if (Number.isFinite(header) && header > 0) return Math.ceil(header);
  const failure = err.findDetails(FailureSchema)[0];
  if (failure?.retryAfterSeconds) return failure.retryAfterSeconds;
  const invoke = err.findDetails(InvokeFailureSchema)[0];
  if (invoke?.retryAfterMs) return Math.max(1, Math.ceil(invoke.retryAfterMs / 1000));
  return 1;
}

/** Only Retry-After of runtimed's error metadata reaches the caller. */
function filtered(h: Headers): Headers {
  const out = new Headers();
  const ra = h.get("retry-after");
  if (ra) out.set("retry-after", ra);
  return out;
}

/** HTTP status of a Connect code on the plain file routes. */
const HTTP_OF: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.FailedPrecondition]: 409,
  [Code.OutOfRange]: 416,
  [Code.ResourceExhausted]: 429,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

/** A session error as the plain routes answer it: the JSON body and status of the error table. */
export function sessionErrorResponse(e: unknown): Response {
  if (e instanceof GatewayError) return e.toResponse();
  if (!(e instanceof ConnectError)) return GatewayError.from(e).toResponse();
  const headers: Record<string, string> = { "content-type": "application/json" };
  const ra = e.metadata.get("retry-after");
  if (ra) headers["retry-after"] = ra;
  return new Response(
    JSON.stringify({ code: codeName(e.code), reason: Code[e.code], message: e.rawMessage }),
    { status: HTTP_OF[e.code] ?? 500, headers },
  );
}

/** Any session error as the ConnectError the RPC surfaces throw. */
export function toConnectError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  return GatewayError.from(e).toConnectError();
}
