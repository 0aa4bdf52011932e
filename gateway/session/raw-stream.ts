/**
 * The fast path of the streaming session calls (Exec, ReadFile) for Connect-protocol clients on the
 * Bun listener: runtimed serves the very same SessionService, so a Connect binary stream is passed
 * through as bytes — the request's one envelope is decoded only to authorize and route it, and
 * runtimed's frames are relayed as they arrive, without decoding and re-encoding each message
 * (the router path costs ~0.5 ms more per Exec in-process; see bench/session-gateway).
 *
 * The first frame is looked at before anything is sent to the caller: an end-stream frame (the
 * call was refused before it produced anything) is mapped like the router path maps errors
 * (session busy → RESOURCE_EXHAUSTED + Retry-After, the gateway's token refused → INTERNAL); a
 * refused fence hands the call to the router path, which re-resolves the route. Everything this
 * path does not handle — other content types, compression, a malformed envelope, refusals by the
 * gateway itself (auth, routing, limits), a pod that cannot be reached — is handed to the router
 * path unchanged, which answers exactly as before. Frames after the first are relayed untouched;
 * the end-stream frame is read on the way for the metrics' code.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { createEndStreamSerialization, endStreamFlag } from "@connectrpc/connect/protocol-connect";
import {
  ExecRequestSchema,
  ReadFileRequestSchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { codeName, ErrorReason, GatewayError } from "../errors.ts";
import { classifySessionError } from "./session-errors.ts";

export type FetchHandler = (request: Request) => Promise<Response>;

export const RAW_STREAM_PATHS: Record<string, "exec" | "readFile"> = {
  "/kruntimes.gateway.v1.SessionService/Exec": "exec",
  "/kruntimes.gateway.v1.SessionService/ReadFile": "readFile",
};
const SCHEMAS = { exec: ExecRequestSchema, readFile: ReadFileRequestSchema } as const;
const CONTENT_TYPE = "application/connect+proto";
const endStream = createEndStreamSerialization({});

/** What the fast path needs from the SessionGateway. */
export interface RawStreamHost {
  /** Authorize, bound and route; returns the upstream URL, headers and signal, and the call's end (for metrics). */
  open(
    method: "exec" | "readFile",
    req: object,
    request: Request,
  ): Promise<{
    url: string;
    headers: Record<string, string>;
    signal: AbortSignal;
    done(code: string, firstFrameMs?: number): void;
  }>;
}

/** One envelope of a Connect stream: flags, then a 4-byte big-endian length, then the payload. */
function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.byteLength);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.byteLength);
  out.set(payload, 5);
  return out;
}

/**
 * Splits a Connect stream as it passes: the bytes of message frames are relayed as they come; the
 * end-stream frame (always the last) is held back, so its error can be mapped like the router
 * path maps errors before it is sent on.
 */
class FrameTracker {
  private readonly hdr = new Uint8Array(5);
  private hdrN = 0;
  private left = 0;
  private phase: "header" | "payload" | "end" = "header";
  private readonly endParts: Uint8Array[] = [];
  /** Message frames seen whole. */
  frames = 0;
  /** The end-stream frame began before any message frame: the call produced nothing. */
  firstIsEnd = false;

  get inEnd(): boolean {
    return this.phase === "end";
  }

  /** Feeds a chunk; returns the part of it to relay now (message frames only). */
  push(chunk: Uint8Array): Uint8Array {
    if (this.phase === "end") {
      this.endParts.push(chunk.slice());
      return chunk.subarray(0, 0);
    }
    let at = 0;
    while (at < chunk.byteLength) {
      if (this.phase === "header") {
        if (this.hdrN === 0 && ((chunk[at] as number) & endStreamFlag) === endStreamFlag) {
          this.phase = "end";
          this.firstIsEnd = this.frames === 0;
          this.endParts.push(chunk.slice(at));
          return chunk.subarray(0, at);
        }
        const n = Math.min(5 - this.hdrN, chunk.byteLength - at);
        this.hdr.set(chunk.subarray(at, at + n), this.hdrN);
        this.hdrN += n;
        at += n;
        if (this.hdrN === 5) {
          this.hdrN = 0;
          this.left = new DataView(this.hdr.buffer).getUint32(1);
          if (this.left === 0) this.frames++;
          else this.phase = "payload";
        }
      } else {
        const n = Math.min(this.left, chunk.byteLength - at);
        this.left -= n;
        at += n;
        if (this.left === 0) {
          this.frames++;
          this.phase = "header";
        }
      }
    }
    return chunk;
  }

  /** The held-back end-stream frame, whole (header included), once the stream has ended. */
  endFrame(): Uint8Array | undefined {
    return this.phase === "end" ? new Uint8Array(Buffer.concat(this.endParts)) : undefined;
  }
}

/**
 * The end-stream frame to send for runtimed's: unchanged when it carries no error; otherwise the
 * error mapped as the router path maps it (`stale` only counts before anything was produced —
 * after that a broken route is UNAVAILABLE). Also the code for the metrics.
 */
function mappedEnd(
  frame: Uint8Array,
  produced: boolean,
): { frame: Uint8Array; code: string; stale: boolean } {
  let end: ReturnType<typeof endStream.parse>;
  try {
    end = endStream.parse(frame.subarray(5));
  } catch {
    return { frame, code: "internal", stale: false };
  }
  if (!end.error) return { frame, code: "ok", stale: false };
  const f = classifySessionError(
    new ConnectError(end.error.rawMessage, end.error.code, end.metadata, end.error.details as never),
  );
  let err: ConnectError;
  if (f.kind === "stale") {
    if (!produced) return { frame, code: "", stale: true };
    err = new GatewayError(
      ErrorReason.Unreachable,
      `the stream from runtimed broke (${f.why})`,
    ).toConnectError();
  } else err = f.error instanceof GatewayError ? f.error.toConnectError() : f.error;
  // Retry-After travels once, as end-stream metadata (the client merges it into the error).
  const bare = new ConnectError(err.rawMessage, err.code, undefined, err.details as never);
  return {
    frame: envelope(endStreamFlag, endStream.serialize({ metadata: err.metadata, error: bare })),
    code: codeName(err.code),
    stale: false,
  };
}

export function rawStreamHandler(
  host: RawStreamHost,
  method: "exec" | "readFile",
  router: FetchHandler,
): FetchHandler {
  return async (request) => {
    if (
      request.headers.get("content-type") !== CONTENT_TYPE ||
      (request.headers.get("connect-content-encoding") ?? "identity") !== "identity"
    )
      return router(request);
    const body = new Uint8Array(await request.arrayBuffer());
    const viaRouter = () =>
      router(
        new Request(request.url, { method: "POST", headers: request.headers, body, signal: request.signal }),
      );
    if (body.byteLength < 5 || body[0] !== 0) return viaRouter();
    const length = new DataView(body.buffer, body.byteOffset).getUint32(1);
    if (length + 5 !== body.byteLength) return viaRouter();
    let req: object;
    try {
      req = fromBinary(SCHEMAS[method], body.subarray(5));
    } catch {
      return viaRouter();
    }
    let call: Awaited<ReturnType<RawStreamHost["open"]>>;
    try {
      call = await host.open(method, req, request);
    } catch {
      // The gateway's own refusal (auth, route, limits, busy): the router path answers it.
      return viaRouter();
    }
    const t0 = performance.now();
    let upstream: Response;
    try {
      upstream = await fetch(call.url, { method: "POST", headers: call.headers, body, signal: call.signal });
    } catch {
      call.done("abandoned");
      return viaRouter();
    }
    if (upstream.status !== 200 || upstream.headers.get("content-type") !== CONTENT_TYPE || !upstream.body) {
      await upstream.body?.cancel().catch(() => {});
      call.done("abandoned");
      return viaRouter();
    }
    const reader = upstream.body.getReader();
    const tracker = new FrameTracker();
    const head: Uint8Array[] = [];
    let ended = false;
    try {
      // Until a whole message frame arrived, or the stream ended (refused before producing anything).
      while (tracker.frames === 0) {
        const r = await reader.read();
        if (r.done) {
          ended = true;
          break;
        }
        const relay = tracker.push(r.value);
        if (relay.byteLength > 0) head.push(relay);
      }
    } catch {
      call.done("abandoned");
      return viaRouter();
    }
    const firstFrameMs = performance.now() - t0;
    if (tracker.frames === 0) {
      const frame = tracker.endFrame();
      if (!ended || !frame) {
        await reader.cancel().catch(() => {});
        call.done("abandoned");
        return viaRouter();
      }
      const end = mappedEnd(frame, false);
      if (end.stale) {
        // A refused fence: the router path re-resolves the route.
        call.done("abandoned");
        return viaRouter();
      }
      call.done(end.code, firstFrameMs);
      return new Response(end.frame, { status: 200, headers: { "content-type": CONTENT_TYPE } });
    }
    let finished = false;
    const finish = (code: string) => {
      if (finished) return;
      finished = true;
      call.done(code, firstFrameMs);
    };
    const out = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of head) controller.enqueue(c);
      },
      async pull(controller) {
        try {
          for (;;) {
            const r = await reader.read();
            if (r.done) {
              const frame = tracker.endFrame();
              const end = frame ? mappedEnd(frame, true) : undefined;
              if (end) controller.enqueue(end.frame);
              finish(end?.code ?? "ok");
              controller.close();
              return;
            }
            const relay = tracker.push(r.value);
            if (relay.byteLength > 0) {
              controller.enqueue(relay);
              return;
            }
          }
        } catch (e) {
          finish("unavailable");
          controller.error(e);
        }
      },
      async cancel() {
        finish("canceled");
        await reader.cancel().catch(() => {});
      },
    });
    return new Response(out, { status: 200, headers: { "content-type": CONTENT_TYPE } });
  };
}
