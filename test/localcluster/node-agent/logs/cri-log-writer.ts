/**
 * Writes one container attempt's stdout and stderr into a CRI log file. Bytes are cut into lines
 * per stream; a line longer than `maxLineBytes` is written as partial (P) records like containerd
 * does; a last line without a newline is flushed as a full record when the stream ends.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { formatRecord, type LogStream } from "./cri-log-format.ts";

const MAX_LINE_BYTES = 16 * 1024;
const NEWLINE = Buffer.from("\n");

export class CriLogWriter {
  private fd: number | undefined;
  private readonly pending: Record<LogStream, Buffer> = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };

  constructor(
    readonly file: string,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    this.fd = openSync(file, "a");
  }

  get closed(): boolean {
    return this.fd === undefined;
  }

  write(stream: LogStream, chunk: Uint8Array): void {
    let buf = Buffer.concat([this.pending[stream], chunk]);
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl < 0) break;
      this.emitLine(stream, buf.subarray(0, nl), false);
      buf = buf.subarray(nl + 1);
    }
    while (buf.length >= this.maxLineBytes) {
      this.emitLine(stream, buf.subarray(0, this.maxLineBytes), true);
      buf = buf.subarray(this.maxLineBytes);
    }
    this.pending[stream] = Buffer.from(buf);
  }

  /** The stream reached EOF: flush what is left of its last line. */
  end(stream: LogStream): void {
    const rest = this.pending[stream];
    if (rest.length > 0) this.emitLine(stream, rest, false);
    this.pending[stream] = Buffer.alloc(0);
  }

  close(): void {
    this.end("stdout");
    this.end("stderr");
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private emitLine(stream: LogStream, bytes: Uint8Array, partial: boolean): void {
    if (this.fd === undefined) return;
    // A CRLF line ends without its CR, as with containerd's line reader; other bytes are kept as they are.
    const end =
      !partial && bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    const header = formatRecord(stream, "", partial).slice(0, -1);
    writeSync(this.fd, Buffer.concat([Buffer.from(header), bytes.subarray(0, end), NEWLINE]));
  }
}
