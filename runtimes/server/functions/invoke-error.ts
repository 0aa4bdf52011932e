/**
 * InvokeError is a failed Invoke (not a handler error): one InvokeFailure reason, which fixes its
 * Connect code in one table, sent as a Connect error with an InvokeFailure detail.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  InvokeFailureSchema,
  InvokeFailure_Reason as Reason,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";

export const invokeCodes: Record<Reason, Code> = {
  [Reason.UNSPECIFIED]: Code.Internal,
  [Reason.NOT_REGISTERED]: Code.NotFound,
  [Reason.STALE]: Code.FailedPrecondition,
  [Reason.NOT_READY]: Code.FailedPrecondition,
  [Reason.BUSY]: Code.ResourceExhausted,
  [Reason.REQUEST_TOO_LARGE]: Code.ResourceExhausted,
  [Reason.RESPONSE_TOO_LARGE]: Code.ResourceExhausted,
  [Reason.TIMEOUT]: Code.DeadlineExceeded,
  [Reason.WORKER_CRASHED]: Code.Unavailable,
  [Reason.CANCELLED]: Code.Canceled,
  [Reason.INVALID]: Code.InvalidArgument,
};

export class InvokeError extends Error {
  override name = "InvokeError";
  constructor(
    readonly reason: Reason,
    message: string,
    readonly retryAfterMs = 0,
  ) {
    super(message);
  }

  toConnectError(): ConnectError {
    return new ConnectError(this.message, invokeCodes[this.reason], undefined, [
      {
        desc: InvokeFailureSchema,
        value: create(InvokeFailureSchema, { reason: this.reason, retryAfterMs: this.retryAfterMs }),
      },
    ]);
  }
}
