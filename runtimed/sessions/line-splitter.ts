/**
 * Bytes of one output stream → lines (UTF-8, without the newline), for log records. A line longer
 * than `maxLine` bytes is cut into records of that size; `flush` emits an unterminated last line.
 */
const NL = 0x0a;

export class LineSplitter {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly emit: (line: string) => void,
    private readonly maxLine = 16 * 1024,
  ) {}

  push(data: Uint8Array): void {
    let start = 0;
    for (let i = 0; i < data.length; i++) {
      if (data[i] === NL) {
        this.take(data.subarray(start, i));
        this.out();
        start = i + 1;
      } else if (this.pendingBytes + (i + 1 - start) >= this.maxLine) {
        this.take(data.subarray(start, i + 1));
        this.out();
        start = i + 1;
      }
    }
    if (start < data.length) this.take(data.subarray(start));
  }

  flush(): void {
    if (this.pendingBytes > 0) this.out();
  }

  private take(b: Uint8Array): void {
    if (b.length === 0) return;
    this.pending.push(b.slice());
    this.pendingBytes += b.length;
  }

  private out(): void {
    const all = new Uint8Array(this.pendingBytes);
    let o = 0;
    for (const p of this.pending) {
      all.set(p, o);
      o += p.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.emit(this.decoder.decode(all));
  }
}
