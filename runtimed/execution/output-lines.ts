/**
 * Splits an attempt's output chunks (as the process wrote them, not on line boundaries) into
 * lines, one per stream, so each line becomes one structured log record `krt logs` can read.
 * Lines longer than `maxLine` characters are emitted in pieces, so memory stays bounded.
 */

export type Stream = "stdout" | "stderr";

export class LineSplitter {
  private readonly decoder = new TextDecoder("utf-8", { fatal: false });
  private partial = "";

  constructor(
    private readonly emit: (line: string) => void,
    private readonly maxLine = 16 * 1024,
  ) {}

  push(bytes: Uint8Array): void {
    let text = this.partial + this.decoder.decode(bytes, { stream: true });
    let nl = text.indexOf("\n");
    while (nl >= 0) {
      this.emitLine(text.slice(0, nl));
      text = text.slice(nl + 1);
      nl = text.indexOf("\n");
    }
    while (text.length >= this.maxLine) {
      this.emit(text.slice(0, this.maxLine));
      text = text.slice(this.maxLine);
    }
    this.partial = text;
  }

  /** Emits what is left (a last line without a newline). */
  flush(): void {
    const rest = this.partial + this.decoder.decode();
    this.partial = "";
    if (rest.length > 0) this.emitLine(rest);
  }

  private emitLine(line: string): void {
    const l = line.endsWith("\r") ? line.slice(0, -1) : line;
    for (let i = 0; i < l.length || i === 0; i += this.maxLine) {
      this.emit(l.slice(i, i + this.maxLine));
      if (l.length === 0) break;
    }
  }
}
