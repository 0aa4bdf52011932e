/**
 * WatchStream is one Watch subscriber of a registration: a bounded queue of events and an async
 * iterator over it. A subscriber that falls more than MAX_QUEUED events behind loses log events
 * (never state events): they are counted and reported as one marker line when it catches up.
 */
import { create } from "@bufbuild/protobuf";
import {
  type FunctionServiceWatchResponse,
  FunctionServiceWatchResponseSchema,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { nowMicros } from "../clock.ts";

const MAX_QUEUED = 4096;

export class WatchStream {
  private queue: FunctionServiceWatchResponse[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private dropped = 0;

  constructor(private readonly onClose: (stream: WatchStream) => void) {}

  push(event: FunctionServiceWatchResponse): void {
    if (this.ended) return;
    if (event.event.case === "log" && this.queue.length >= MAX_QUEUED) {
      this.dropped += event.event.value.lines.length;
      return;
    }
    if (this.dropped > 0 && this.queue.length < MAX_QUEUED) {
      this.queue.push(
        create(FunctionServiceWatchResponseSchema, {
          event: {
            case: "log",
            value: {
              stream: "stderr",
              lines: [`[... ${this.dropped} log lines dropped: the watcher fell behind ...]`],
              timeMicros: BigInt(nowMicros()),
            },
          },
        }),
      );
      this.dropped = 0;
    }
    this.queue.push(event);
    this.wake?.();
  }

  /** No events after those queued. */
  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *iterate(signal: AbortSignal): AsyncGenerator<FunctionServiceWatchResponse> {
    const onAbort = () => this.wake?.();
    signal.addEventListener("abort", onAbort);
    try {
      for (;;) {
        while (this.queue.length > 0) {
          const batch = this.queue;
          this.queue = [];
          for (const event of batch) yield event;
        }
        if (this.ended || signal.aborted) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.onClose(this);
    }
  }
}
