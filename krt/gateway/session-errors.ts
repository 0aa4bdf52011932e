/**
 * A SessionService error → the CLI's error. The gateway's own refusals read as for `krt invoke`
 * (same exit codes), with the session's words: `runs/session` for permission, the session's queue
 * for 429; the session's own answers (a missing file, a path outside the workspace, a file that
 * exists) say which path.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Failure_Reason,
  FailureSchema,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { invokeError } from "./invoke-errors.ts";

export interface SessionErrorTarget {
  namespace: string;
  run: string;
  via: string;
  /** The workspace path the call was about, if any. */
  path?: string;
}

export function sessionError(e: unknown, t: SessionErrorTarget): CliError {
  if (!(e instanceof ConnectError)) return CliError.from(e);
  const name = `session "${t.run}" in namespace "${t.namespace}"`;
  const where = t.path !== undefined ? `${t.run}:${t.path}` : name;
  const gatewayFailure = e.findDetails(FailureSchema)[0]?.reason;
  switch (e.code) {
    case Code.PermissionDenied:
      // The gateway's refusal names the grant; anything else is the session's own (a path outside the workspace).
      if (!/may not create runs\//.test(e.rawMessage))
        return new CliError(
          ExitCode.Forbidden,
          `${where}: ${e.rawMessage}`,
          "paths are relative to the session's workspace and stay inside it",
        );
      return new CliError(
        ExitCode.Forbidden,
        `forbidden: you may not create runs.kruntimes.io/session "${t.run}" in namespace "${t.namespace}": ${e.rawMessage}`,
        `ask for a Role with: apiGroups [kruntimes.io], resources [runs/session], verbs [create], resourceNames [${t.run}]`,
      );
    case Code.NotFound:
      if (/^run .* does not exist|check the namespace and Run name/.test(e.rawMessage))
        return new CliError(
          ExitCode.NotFound,
          `${name} not found: ${e.rawMessage}`,
          "list Runs with `krt list`",
        );
      return new CliError(ExitCode.NotFound, `${where}: no such file or directory (${e.rawMessage})`);
    case Code.AlreadyExists:
      return new CliError(ExitCode.Conflict, `${where} already exists: ${e.rawMessage}`);
    case Code.FailedPrecondition: {
      const nr = e.findDetails(RunNotReadySchema)[0];
      // Without RunNotReady it is the session's own answer about the path (a directory read as a
      // file, a file where a directory is needed), not a Run that cannot serve.
      if (!nr && gatewayFailure === undefined && t.path !== undefined)
        return new CliError(ExitCode.Conflict, `${where}: ${e.rawMessage}`);
      if (!nr) break;
      return new CliError(
        ExitCode.NotReady,
        `${name} cannot be used now (phase ${nr.phase || "Pending"}, mode ${nr.mode || "?"}): ${e.rawMessage}`,
        nr.mode && nr.mode !== "session"
          ? "only session Runs take exec/cp/ls: create one with `krt session create`"
          : `wait until it is Ready: \`krt session create --wait\`, or \`krt get ${t.run}\``,
      );
    }
    case Code.ResourceExhausted:
      if (gatewayFailure === undefined) {
        const ra = e.metadata.get("retry-after");
        return new CliError(
          ExitCode.Busy,
          `the session's operation queue is full${ra ? ` (retry after ${ra}s)` : ""}: ${e.rawMessage}`,
          "wait for queued commands to finish, or create the session with a larger maxQueuedOperations",
        );
      }
      if (gatewayFailure === Failure_Reason.REQUEST_TOO_LARGE)
        return new CliError(
          ExitCode.TooLarge,
          `request too large: ${e.rawMessage}`,
          "send less stdin, or a smaller chunk",
        );
      break;
    case Code.InvalidArgument:
      return CliError.usage(`the session refused the request: ${e.rawMessage}`);
  }
  return invokeError(e, t);
}
