/**
 * The dataplane's route check: the gateway's RouteFence against what this runtimed serves. A
 * mismatch is FAILED_PRECONDITION with a RouteFailure detail (WRONG_POD, NOT_SERVED,
 * WRONG_ATTEMPT, DRAINING) so the gateway knows to re-resolve the route rather than retry here.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  RouteFailure_Reason,
  RouteFailureSchema,
  type RouteFence,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import type { Served } from "../functions/function-table.ts";

export interface FenceContext<S extends Served = Served> {
  podUID: string;
  /** What this runtimed serves: function registrations, or sessions. */
  table: { get(uid: string): S | undefined };
  draining: boolean;
}

export function refuse(message: string, reason: RouteFailure_Reason, podUID = "", attempt = 0): ConnectError {
  return new ConnectError(message, Code.FailedPrecondition, undefined, [
    { desc: RouteFailureSchema, value: create(RouteFailureSchema, { reason, podUid: podUID, attempt }) },
  ]);
}

/** The served entry, or the ConnectError to answer with. */
export function checkFence<S extends Served = Served>(
  fence: RouteFence | undefined,
  c: FenceContext<S>,
): S | ConnectError {
  if (!fence?.runUid) return new ConnectError("fence.run_uid is required", Code.InvalidArgument);
  const who = `${fence.namespace}/${fence.runName}`;
  if (c.draining)
    return refuse(`runtimed on this pod is shutting down; re-resolve ${who}`, RouteFailure_Reason.DRAINING);
  if (fence.podUid !== c.podUID)
    return refuse(
      `this is pod ${c.podUID}, not ${fence.podUid}: the route to ${who} is stale`,
      RouteFailure_Reason.WRONG_POD,
      c.podUID,
    );
  const served = c.table.get(fence.runUid);
  if (!served)
    return refuse(
      `${who} (uid ${fence.runUid}) is not served on this pod`,
      RouteFailure_Reason.NOT_SERVED,
      c.podUID,
    );
  if (served.attempt !== fence.attempt)
    return refuse(
      `${who} is served here under attempt ${served.attempt}, not ${fence.attempt}`,
      RouteFailure_Reason.WRONG_ATTEMPT,
      c.podUID,
      served.attempt,
    );
  return served;
}
