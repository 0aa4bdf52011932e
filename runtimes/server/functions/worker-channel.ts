/**
 * WorkerChannel is the private Unix socket between the server and one function worker: the
 * server listens on a fresh path, the worker connects once, and the listener and its path go
 * away at that moment. Bun's socket callbacks cost a fraction of a pipe's ReadableStream/FileSink
 * round trip (measured inside a Bun.serve handler: ~20 µs vs ~110 µs p50), and the worker's stdout
 * and stderr stay free for the handler's own raw output.
 */
import { rmSync } from "node:fs";
import type { Socket, UnixSocketListener } from "bun";

export class WorkerChannel {
  /** Resolves when the worker connected. */
  readonly connected: Promise<void>;
  private listener: UnixSocketListener<undefined> | undefined;
  private socket: Socket<undefined> | undefined;
  /** Bytes the kernel did not take yet (large bodies), sent on drain. */
  private backlog: Uint8Array[] = [];
  private closed = false;

  constructor(
    readonly path: string,
    onData: (chunk: Uint8Array) => void,
    onClose: () => void,
  ) {
    rmSync(path, { force: true });
    let resolveConnected!: () => void;
    this.connected = new Promise((resolve) => {
      resolveConnected = resolve;
    });
    this.listener = Bun.listen<undefined>({
      unix: path,
      socket: {
        binaryType: "uint8array",
        open: (socket) => {
          if (this.socket !== undefined) {
            socket.end();
            return;
          }
          this.socket = socket;
          this.stopListening();
          resolveConnected();
        },
        data: (_socket, chunk) => onData(chunk),
        drain: () => this.flush(),
        close: () => {
          this.closed = true;
          onClose();
        },
        error: () => {},
      },
    });
  }

  write(bytes: Uint8Array): void {
    if (this.closed || this.socket === undefined) return;
    if (this.backlog.length > 0) {
      this.backlog.push(bytes);
      return;
    }
    const written = this.socket.write(bytes);
    if (written < bytes.length) this.backlog.push(bytes.subarray(Math.max(0, written)));
  }

  private flush(): void {
    while (this.backlog.length > 0 && this.socket !== undefined) {
      const next = this.backlog[0]!;
      const written = this.socket.write(next);
      if (written < next.length) {
        this.backlog[0] = next.subarray(Math.max(0, written));
        return;
      }
      this.backlog.shift();
    }
  }

  private stopListening(): void {
    this.listener?.stop();
    this.listener = undefined;
    rmSync(this.path, { force: true });
  }

  close(): void {
    this.stopListening();
    this.socket?.terminate();
    this.backlog = [];
  }
}
