/**
 * runtimed's output record: one pino JSON line per line a Run printed, on runtimed's stdout —
 * fields `run`, `runUID`, `namespace`, `attempt`, `stream`, `line`, msg "output"; a function's
 * lines also carry `invocation`, a session's `operation`. Everything else runtimed logs (and any
 * non-JSON line) is not output and is skipped.
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
  if (!text.startsWith("{") || !text.includes('"output"')) return undefined;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
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
