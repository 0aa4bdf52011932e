/**
 * Follows one attempt on the Runtime Server to its TaskExited: Execute for a new attempt, Watch to
 * re-attach (after runtimed restarted, or when the stream broke). Output chunks become log lines
 * (deduplicated by stream offset when a Watch replays tails). The execution is not bound to the
 * stream, so a broken stream is re-attached, and only a Watch answering NOT_FOUND means the
 * execution is gone (the Runtime Server restarted): the attempt is lost.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { Reason } from "@kruntimes/api";
import {
  type ExecuteRequest,
  OutputStream,
  type TaskExited,
  type TaskOutput,
  type TaskStarted,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/task_pb.ts";
import type { Logger } from "../logger.ts";
import type { RuntimeServerClients } from "../runtime-server/client.ts";
import { LineSplitter, type Stream } from "./output-lines.ts";

export type AttemptEnd =
  | { kind: "exited"; exited: TaskExited; startedMicros?: number }
  | { kind: "lost"; message: string; startedMicros?: number }
  /** Not started: StartFailed unless `reason` says otherwise (ArtifactInputUnavailable). */
  | { kind: "refused"; message: string; reason?: Reason }
  | { kind: "aborted" };

/** Codes that will not change by asking again: the request itself is wrong for this server. */
const PERMANENT = new Set([
  Code.InvalidArgument,
  Code.FailedPrecondition,
  Code.Unimplemented,
  Code.PermissionDenied,
]);

export interface AttemptStreamOptions {
  tasks: RuntimeServerClients["tasks"];
  /** Logger bound to the Run and attempt: one `output` record per line. */
  log: Logger;
  signal: AbortSignal;
  onStarted(s: TaskStarted): void;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

export async function followAttempt(
  req: ExecuteRequest,
  adopt: boolean,
  o: AttemptStreamOptions,
): Promise<AttemptEnd> {
  const streams: Record<Stream, { lines: LineSplitter; next: number }> = {
    stdout: { lines: new LineSplitter((line) => o.log.info({ stream: "stdout", line }, "output")), next: 0 },
    stderr: { lines: new LineSplitter((line) => o.log.info({ stream: "stderr", line }, "output")), next: 0 },
  };
  const flush = () => {
    streams.stdout.lines.flush();
    streams.stderr.lines.flush();
  };
  const output = (out: TaskOutput) => {
    const name: Stream = out.stream === OutputStream.STDERR ? "stderr" : "stdout";
    const s = streams[name];
    let data = out.data;
    const offset = Number(out.offset);
    const end = offset + data.length;
    if (end <= s.next) return;
    if (offset < s.next) data = data.subarray(s.next - offset);
    else if (offset > s.next)
      o.log.warn({ stream: name, missingBytes: offset - s.next }, "output bytes not received (re-attached)");
    s.next = end;
    s.lines.push(data);
  };
  let mode: "execute" | "watch" = adopt ? "watch" : "execute";
  let started: number | undefined;
  let delay = 50;
  for (;;) {
    if (o.signal.aborted) return { kind: "aborted" };
    try {
      const events =
        mode === "execute"
          ? o.tasks.execute(req, { signal: o.signal })
          : o.tasks.watch(
              { runUid: req.runUid, attempt: req.attempt, replayTails: true },
              { signal: o.signal },
            );
      for await (const res of events) {
        const ev = res.event?.event;
        if (ev?.case === "started") {
          if (started === undefined) {
            started = Number(ev.value.startedAtMicros);
            o.onStarted(ev.value);
          }
        } else if (ev?.case === "output") output(ev.value);
        else if (ev?.case === "exited") {
          flush();
          return { kind: "exited", exited: ev.value, startedMicros: started };
        }
      }
      throw new ConnectError("the stream ended before TaskExited", Code.Unavailable);
    } catch (e) {
      if (o.signal.aborted) return { kind: "aborted" };
      const err = ConnectError.from(e);
      if (mode === "execute" && err.code === Code.AlreadyExists) {
        mode = "watch";
        continue;
      }
      if (mode === "watch" && err.code === Code.NotFound) {
        flush();
        return {
          kind: "lost",
          message: `the Runtime Server no longer knows attempt ${req.attempt} (it restarted, or dropped the execution)`,
          startedMicros: started,
        };
      }
      if (mode === "execute" && PERMANENT.has(err.code))
        return { kind: "refused", message: `the Runtime Server refused the attempt: ${err.rawMessage}` };
      // Before TaskStarted nothing may have run: Execute again (ALREADY_EXISTS re-attaches).
      // After it, re-attach with Watch. Either way the server may be restarting: back off.
      if (started !== undefined) mode = "watch";
      o.log.warn(
        { err: err.message, code: Code[err.code], retryInMs: delay, mode },
        "Runtime Server stream failed; retrying",
      );
      await sleep(delay, o.signal);
      delay = Math.min(delay * 2, 2000);
    }
  }
}
