/**
 * The one error type of the Runtime Server's API boundary. Its closed set of reasons maps onto
 * Connect codes in one table; failures that belong to a Run (bad input, spawn errors) are not
 * errors but a TaskExited with a terminal reason.
 */
import { Code, ConnectError } from "@connectrpc/connect";

export type ServerErrorReason =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "failed_precondition"
  | "resource_exhausted"
  | "unavailable"
  | "internal";

const connectCodes: Record<ServerErrorReason, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  failed_precondition: Code.FailedPrecondition,
  resource_exhausted: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
  internal: Code.Internal,
};

export class RuntimeServerError extends Error {
  override name = "RuntimeServerError";
  constructor(
    readonly reason: ServerErrorReason,
    message: string,
  ) {
    super(message);
  }

  toConnectError(): ConnectError {
    return new ConnectError(this.message, connectCodes[this.reason]);
  }

  /** Any thrown value as a ConnectError; unknown failures become internal. */
  static toConnect(cause: unknown): ConnectError {
    if (cause instanceof RuntimeServerError) return cause.toConnectError();
    if (cause instanceof ConnectError) return cause;
    return new ConnectError(cause instanceof Error ? cause.message : String(cause), Code.Internal);
  }
}
