/**
 * runtimed's output record: one pino JSON line per line a Run printed, on runtimed's stdout —
 * fields `run`, `runUID`, `namespace`, `attempt`, `stream`, `line`, msg "output"; a function's
 * lines also carry `invocation`, a session's `operation`. A session's audit records (msg "session
 * operation", `audit: true`: who, which operation, bounded arguments, result, duration) are shown
 * too, as one `audit: …` line on stderr each. Everything else runtimed logs (and any non-JSON line)
 * is not output and is skipped.
 */

export type OutputStream = "stdout" | "stderr";

export interface OutputLine {
  run: string;
  runUID: string;
  namespace: string;
  attempt: number;
  stream: OutputStream;
  line: string;
  /** The function invocation or session operation that printed it; absent for tasks. */
  call?: string;
}

/** The output record in one log line, or undefined when the line is not one. */
export function parseOutputLine(text: string): OutputLine | undefined {
  if (!text.startsWith("{") || !(text.includes('"output"') || text.includes('"audit"'))) return undefined;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (v.audit === true && v.msg === "session operation") return auditLine(v);
  if (v.msg !== "output") return undefined;
  const { run, runUID, namespace, attempt, stream, line, invocation, operation } = v;
  if (typeof runUID !== "string" || typeof line !== "string") return undefined;
  if (stream !== "stdout" && stream !== "stderr") return undefined;
  if (typeof attempt !== "number" || !Number.isInteger(attempt)) return undefined;
  return {
    run: typeof run === "string" ? run : "",
    runUID,
    namespace: typeof namespace === "string" ? namespace : "",
    attempt,
    stream,
    line,
    ...(typeof invocation === "string" && invocation ? { call: invocation } : {}),
    ...(typeof operation === "string" && operation ? { call: operation } : {}),
  };
}

/** The fields of an audit record that are not the operation's own arguments. */
const AUDIT_KEYS = new Set([
  ...["level", "time", "msg", "component", "pod", "host", "run", "runUID", "namespace", "attempt"],
  ...["audit", "caller", "op", "result", "durationMs", "operation"],
]);

/** A session's audit record as one stderr line: `audit: exec by <caller>: ok (12.3 ms) {args}`. */
function auditLine(v: Record<string, unknown>): OutputLine | undefined {
  const { run, runUID, namespace, attempt, caller, op, result, durationMs, operation } = v;
  if (typeof runUID !== "string" || typeof op !== "string") return undefined;
  if (typeof attempt !== "number" || !Number.isInteger(attempt)) return undefined;
  const args = Object.fromEntries(Object.entries(v).filter(([k]) => !AUDIT_KEYS.has(k)));
  const took = typeof durationMs === "number" ? ` (${durationMs} ms)` : "";
  const rest = Object.keys(args).length ? ` ${JSON.stringify(args)}` : "";
  return {
    run: typeof run === "string" ? run : "",
    runUID,
    namespace: typeof namespace === "string" ? namespace : "",
    attempt,
    stream: "stderr",
    line: `audit: ${op} by ${typeof caller === "string" && caller ? caller : "(unknown)"}: ${String(result)}${took}${rest}`,
    ...(typeof operation === "string" && operation ? { call: operation } : {}),
  };
}

/** Which output lines of a pod's log belong to the Run being shown. */
export interface OutputFilter {
  runUID: string;
  /** Only this attempt; undefined: every attempt. */
  attempt?: number;
  /** Only the lines of this function invocation or session operation. */
  call?: string;
}

export function matches(o: OutputLine, f: OutputFilter): boolean {
  return (
    o.runUID === f.runUID &&
    (f.attempt === undefined || o.attempt === f.attempt) &&
    (f.call === undefined || o.call === f.call)
  );
}
