/**
 * A failed tool call → an MCP tool error (`isError: true`): the model reads the text, so it says
 * what failed in the gateway's or the API server's words, its class (the name of krt's exit code,
 * e.g. NotFound, Forbidden, Busy) and what to do next. krt's own hints name CLI commands; where
 * the next step is a tool, the hint names the tool instead.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

const CLASS = new Map<number, string>(Object.entries(ExitCode).map(([k, v]) => [v, k]));

/** What the call was about: a gateway session operation, a function call, or a Run in the API. */
export type ErrorSubject = "session" | "function" | "run";

/** What the model should do next, when it is a tool call rather than a krt command. */
function toolHint(e: CliError, subject: ErrorSubject | undefined): string | undefined {
  const krtHint = e.hint?.includes("`krt") ? undefined : e.hint;
  switch (e.exitCode) {
    case ExitCode.NotFound:
      if (subject === "session")
        return /^session "/.test(e.message)
          ? "sessions that ended are gone; create a new one with create_session"
          : "check the path with list_files";
      if (subject === "function")
        return "check the name: it must be a function Run in this server's namespace";
      if (subject === "run") return krtHint ?? "check the name; Runs that ended may have been deleted";
      return krtHint;
    case ExitCode.NotReady:
      if (subject === "session")
        return "a session that has ended cannot be used again: create a new one with create_session";
      return "the function is not serving (it is starting, or it has ended); retry shortly, or have it started again";
    case ExitCode.DeadlineExceeded:
      return "allow longer with timeoutSeconds (at most the function's invocationTimeout)";
    case ExitCode.Conflict:
      return subject === "session"
        ? "use mode truncate to replace the file, or another path"
        : "pick another name, or leave the name out to have one generated";
    case ExitCode.HandlerError:
      return "the handler's own error: fix the input or the handler; the function stays Ready";
    case ExitCode.Unavailable:
      return `${e.hint ? `${e.hint}; ` : ""}retry: the next call looks for the gateway again`;
    default:
      return e.hint;
  }
}

export function toolError(e: unknown, subject?: ErrorSubject): CallToolResult {
  const err = CliError.from(e);
  const cls = CLASS.get(err.exitCode) ?? "Error";
  const hint = toolHint(err, subject);
  // An unexpected error carries its stack: the model needs what happened, not where in krt.
  const message =
    err.exitCode === ExitCode.Internal ? err.message.replace(/(\n\s+at .*)+/g, "") : err.message;
  return {
    isError: true,
    content: [{ type: "text", text: `error (${cls}): ${message}${hint ? `\nnext: ${hint}` : ""}` }],
  };
}
