/** Where `krt logs` writes: each output line to stdout or stderr by its stream; krt's own notes to stderr. */
import type { Writable } from "node:stream";
import type { OutputStream } from "./output-line.ts";

export interface LogSink {
  line(stream: OutputStream, text: string): void;
  /** A remark from krt itself (fallbacks, attempt headers), prefixed `krt:` on stderr. */
  note(text: string): void;
}

export function streamSink(stdout: Writable, stderr: Writable): LogSink {
  return {
    line: (stream, text) => (stream === "stdout" ? stdout : stderr).write(`${text}\n`),
    note: (text) => stderr.write(`krt: ${text}\n`),
  };
}
