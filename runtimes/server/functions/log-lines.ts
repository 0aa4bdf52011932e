/**
 * Cuts function output into FunctionLog lines: complete lines without their newline, an
 * over-long line cut at MAX_LINE characters and marked. A Splitter keeps the unfinished last line
 * of a stream that arrives in pieces (raw worker output); whole texts (one invocation's captured
 * output) are split at once, their last line being complete by definition.
 */
export const MAX_LINE = 16 * 1024;

function bounded(line: string): string {
  return line.length > MAX_LINE
    ? `${line.slice(0, MAX_LINE)} [... ${line.length - MAX_LINE} characters cut]`
    : line;
}

/** The lines of a complete text ("a\nb\n" and "a\nb" both give ["a", "b"]). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => bounded(line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** Lines of a stream arriving in pieces. */
export class Splitter {
  private partial = "";

  push(text: string): string[] {
    const joined = this.partial + text;
    const at = joined.lastIndexOf("\n");
    if (at === -1) {
      this.partial = joined;
      if (this.partial.length <= MAX_LINE) return [];
      this.partial = "";
      return [bounded(joined)];
    }
    this.partial = joined.slice(at + 1);
    return splitLines(joined.slice(0, at + 1));
  }

  /** The unfinished last line, if any. */
  flush(): string[] {
    const rest = this.partial;
    this.partial = "";
    return rest === "" ? [] : [bounded(rest)];
  }
}
