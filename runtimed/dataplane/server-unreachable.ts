/**
 * A failure to reach the Runtime Server, classified by whether the invocation can have run: the
 * socket could not be opened (missing, refused: the server is restarting) — nothing was sent, so
 * it is FAILED_PRECONDITION with `InvokeFailure` NOT_READY, safe for a caller to retry — or the
 * connection broke after the request went out — UNAVAILABLE, the handler may have run.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  InvokeFailure_Reason,
  InvokeFailureSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

const NOT_SENT = /ENOENT|ECONNREFUSED|FailedToOpenSocket|ConnectionRefused|Unable to connect/;

export function serverUnreachable(e: unknown): ConnectError {
  const text = e instanceof Error ? `${(e as { code?: string }).code ?? ""} ${e.message}` : String(e);
  if (NOT_SENT.test(text))
    return new ConnectError(
      `the Runtime Server is not reachable (restarting?); the invocation was not sent: ${text.trim()}`,
      Code.FailedPrecondition,
      undefined,
      [
        {
          desc: InvokeFailureSchema,
          value: create(InvokeFailureSchema, { reason: InvokeFailure_Reason.NOT_READY }),
        },
      ],
    );
  return new ConnectError(`the connection to the Runtime Server broke: ${text.trim()}`, Code.Unavailable);
}
