/** Where `krt logs` writes: each output line to stdout or stderr by its stream; krt's own notes to stderr. */
import type { Writable } from "node:stream";
import type { OutputStream } from "./output-line.ts";

export interface LogSink {
  /** `call`: the function invocation or session operation that printed the line, if any. */
  line(stream: OutputStream, text: string, call?: string): void;
  /** A remark from krt itself (fallbacks, attempt headers), prefixed `krt:` on stderr. */
  note(text: string): void;
}

export function streamSink(stdout: Writable, stderr: Writable): LogSink {
  return {
    line: (stream, text) => (stream === "stdout" ? stdout : stderr).write(`${text}\n`),
    note: (text) => stderr.write(`krt: ${text}\n`),
  };
}

/**
 * Narrows a sink to one invocation/operation (`only`) and/or puts `[<call>] ` before each line that
 * has one (`prefix`). Lines without a call (tasks, the status tails) pass when `only` is unset.
 */
export function callSink(inner: LogSink, o: { only?: string; prefix?: boolean }): LogSink {
  if (o.only === undefined && !o.prefix) return inner;
  return {
    line: (stream, text, call) => {
      if (o.only !== undefined && call !== o.only) return;
      inner.line(stream, o.prefix && call ? `[${call}] ${text}` : text, call);
    },
    note: (text) => inner.note(text),
  };
}
