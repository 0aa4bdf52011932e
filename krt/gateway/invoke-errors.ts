/**
 * A gateway error → the CLI's error: one row per Connect code (and `Failure` reason) with the
 * exit code from exit-codes.ts and a hint that says what to do. A handler error is printed in
 * full (type, message, traceback) — it is the function's own failure, not krt's.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Failure_Reason,
  FailureSchema,
  HandlerErrorSchema,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";

export interface InvokeTarget {
  namespace: string;
  run: string;
  /** How the gateway was reached, for "cannot reach" messages. */
  via: string;
}

export function invokeError(e: unknown, t: InvokeTarget): CliError {
  if (!(e instanceof ConnectError)) return CliError.from(e);
  const unreachable = connectionFailure(e, t);
  if (unreachable) return unreachable;
  const name = `run "${t.run}" in namespace "${t.namespace}"`;
  const retryAfter = retryAfterSeconds(e);
  const retry = retryAfter ? ` (retry after ${retryAfter}s)` : "";
  const reason = e.findDetails(FailureSchema)[0]?.reason;
  switch (e.code) {
    case Code.Unknown: {
      const h = e.findDetails(HandlerErrorSchema)[0];
      if (!h) break;
      const lines = [`handler error: ${h.type}${h.message ? `: ${h.message}` : ""}`];
      if (h.exitCode) lines.push(`exit code: ${h.exitCode}`);
      if (h.invocationId) lines.push(`invocation: ${h.invocationId}`);
      if (h.traceback) lines.push(h.traceback.trimEnd());
      return new CliError(
        ExitCode.HandlerError,
        lines.join("\n"),
        `the Run stays Ready; see the invocation's output with \`krt logs ${t.run}${h.invocationId ? ` --call ${h.invocationId}` : " --prefix"}\``,
      );
    }
    case Code.Unauthenticated:
      return new CliError(
        ExitCode.Forbidden,
        `the gateway refused the token: ${e.rawMessage}`,
        "pass a valid bearer token with --token (e.g. `kubectl create token <serviceaccount>`)",
      );
    case Code.PermissionDenied:
      return new CliError(
        ExitCode.Forbidden,
        `forbidden: you may not create runs.kruntimes.io/invoke "${t.run}" in namespace "${t.namespace}": ${e.rawMessage}`,
        `ask for a Role with: apiGroups [kruntimes.io], resources [runs/invoke], verbs [create], resourceNames [${t.run}]`,
      );
    case Code.NotFound:
      return new CliError(
        ExitCode.NotFound,
        `${name} not found: ${e.rawMessage}`,
        "list Runs with `krt list`",
      );
    case Code.FailedPrecondition: {
      const nr = e.findDetails(RunNotReadySchema)[0];
      const what = nr ? ` (phase ${nr.phase || "Pending"}, mode ${nr.mode || "?"})` : "";
      return new CliError(
        ExitCode.NotReady,
        `${name} cannot be invoked now${what}: ${e.rawMessage}`,
        nr?.mode && nr.mode !== "function"
          ? "only function Runs can be invoked"
          : `wait until it is Ready: \`krt run --function … --wait\`, or \`krt get ${t.run}\``,
      );
    }
    case Code.ResourceExhausted:
      if (reason === Failure_Reason.REQUEST_TOO_LARGE || reason === Failure_Reason.RESPONSE_TOO_LARGE)
        return new CliError(
          ExitCode.TooLarge,
          `${reason === Failure_Reason.REQUEST_TOO_LARGE ? "request" : "response"} too large: ${e.rawMessage}`,
          "the limits are the Run's spec.mode.function.maxRequestBytes/maxResponseBytes and the gateway's",
        );
      return new CliError(
        ExitCode.Busy,
        `${reason === Failure_Reason.GATEWAY_BUSY ? "the gateway" : "the function"} is busy${retry}: ${e.rawMessage}`,
        reason === Failure_Reason.FUNCTION_BUSY
          ? "retry later, or create the function with a higher --concurrency"
          : "retry later",
      );
    case Code.Unavailable:
      // A 503 from the gateway carries a Failure detail or Retry-After; a failed connection neither.
      if (reason !== undefined || retryAfter !== undefined)
        return new CliError(
          ExitCode.FunctionUnavailable,
          `the gateway could not serve ${name}${retry}: ${e.rawMessage}`,
          "retry; the Run may be moving to another pod",
        );
      return new CliError(
        ExitCode.Unavailable,
        `cannot reach the gateway (${t.via}): ${e.rawMessage}`,
        "check --gateway / --gateway-namespace, or that the gateway pods are ready",
      );
    case Code.DeadlineExceeded:
      return new CliError(
        ExitCode.DeadlineExceeded,
        `the invocation of ${name} did not finish in time: ${e.rawMessage}`,
        "allow longer with --timeout (at most the Run's invocationTimeout)",
      );
    case Code.InvalidArgument:
      return CliError.usage(`the gateway rejected the request: ${e.rawMessage}`);
  }
  return new CliError(ExitCode.Internal, `the gateway answered ${Code[e.code]}: ${e.rawMessage}`);
}

function retryAfterSeconds(e: ConnectError): number | undefined {
  const header = e.metadata.get("retry-after");
  const fromHeader = header ? Number(header) : undefined;
  if (fromHeader !== undefined && Number.isFinite(fromHeader)) return fromHeader;
  const fromDetail = e.findDetails(FailureSchema)[0]?.retryAfterSeconds;
  return fromDetail || undefined;
}

/** fetch failed before the gateway answered (refused, DNS, TLS): connect-web wraps it. */
function connectionFailure(e: ConnectError, t: InvokeTarget): CliError | undefined {
  if (e.findDetails(HandlerErrorSchema).length > 0 || e.cause === undefined) return undefined;
  const cause = CliError.from(e.cause);
  if (cause.exitCode !== ExitCode.Unavailable) return undefined;
  const code = (e.cause as { code?: string }).code ?? "";
  const tls = /CERT|SIGNATURE|SELF_SIGNED|ALTNAME/.test(code);
  return new CliError(
    ExitCode.Unavailable,
    `cannot reach the gateway (${t.via}): ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`,
    tls
      ? "its certificate did not verify: pass the CA that signed it with --ca-file (the chart publishes it in the ConfigMap <release>-gateway-ca)"
      : "check --gateway / --gateway-namespace, and that the gateway pods are ready",
  );
}
