/**
 * gRPC `FunctionService/Invoke` on the node:http2 listeners without connect-node's adapter: one
 * length-prefixed message in, one out, the status in trailers. Measured under Bun, the adapter's
 * generic machinery (universal request/response bridging, async-iterable pipelines, per-call
 * abort plumbing) costs more CPU per call than the whole invoke path behind it (see
 * bench/results/gateway-2026-12-03.md); a unary call needs none of it. Anything this does not take
 * (another path or method, gRPC-Web, Connect, a compressed message, JSON codec) goes to the adapter
 * unchanged, and errors are written with connect's own trailer encoding (`grpc-status`,
 * `grpc-message`, `grpc-status-details-bin`, plus Retry-After), so clients see the same answers.
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { GatewayError } from "../errors.ts";
import type { Invoker } from "../invoke/invoker.ts";

const INVOKE = FunctionService.method.invoke;
export const INVOKE_PATH = `/${FunctionService.typeName}/${INVOKE.name}`;
const CONTENT_TYPES = new Set(["application/grpc", "application/grpc+proto"]);

/** Is this request one the unary path takes? (Everything else goes to connect-node.) */
export function takesGrpcUnary(req: Http2ServerRequest): boolean {
  if (req.httpVersionMajor !== 2 || req.method !== "POST" || req.url !== INVOKE_PATH) return false;
  const ct = req.headers["content-type"];
  if (!ct || !CONTENT_TYPES.has(ct)) return false;
  const enc = req.headers["grpc-encoding"];
  return enc === undefined || enc === "identity";
}

async function readBody(req: Http2ServerRequest, max: number): Promise<Buffer | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > max) return "too-large";
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

function trailersOf(err: ConnectError | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  setTrailerStatus(new Headers(), err).forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

export async function serveGrpcUnary(
  invoker: Invoker,
  maxBodyBytes: number,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): Promise<void> {
  const contentType = req.headers["content-type"] as string;
  const abort = new AbortController();
  let answered = false;
  res.once("close", () => {
    if (!answered) abort.abort();
  });
  const answer = (message: Uint8Array | undefined, err: ConnectError | undefined) => {
    answered = true;
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": contentType });
    res.addTrailers(trailersOf(err));
    if (!message) {
      res.end();
      return;
    }
    const frame = Buffer.allocUnsafe(5 + message.byteLength);
    frame[0] = 0;
    frame.writeUInt32BE(message.byteLength, 1);
    frame.set(message, 5);
    res.end(frame);
  };
  try {
    const timeout = parseTimeout(
      (req.headers["grpc-timeout"] as string | undefined) ?? null,
      Number.MAX_SAFE_INTEGER,
    );
    if (timeout.error) throw timeout.error;
    const body = await readBody(req, maxBodyBytes + 5);
    if (body === "too-large")
      throw new ConnectError(`message larger than ${maxBodyBytes} bytes`, Code.ResourceExhausted);
    if (body.byteLength < 5 || body.readUInt32BE(1) !== body.byteLength - 5)
      throw new ConnectError(
        "protocol error: expected exactly one length-prefixed message",
        Code.InvalidArgument,
      );
    if (body[0] !== 0)
      throw new ConnectError("protocol error: compressed message without grpc-encoding", Code.Internal);
    let input: ReturnType<typeof fromBinary<typeof INVOKE.input>>;
    try {
      input = fromBinary(INVOKE.input, body.subarray(5));
    } catch (e) {
      // The code and words connect-node's adapter uses (and grpc-go): clients see the same answer.
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
    }
    let out: Awaited<ReturnType<Invoker["invoke"]>>;
    try {
      out = await invoker.invoke({
        namespace: input.namespace,
        run: input.run,
        body: input.body,
        contentType: input.contentType,
        headers: lowerCased(input.headers),
        authorization: req.headers.authorization,
        requestedTimeoutMs: timeout.timeoutMs,
        protocol: "grpc",
        signal: abort.signal,
      });
    } catch (e) {
      throw GatewayError.from(e).toConnectError();
    }
    answer(
      toBinary(
        INVOKE.output,
        create(INVOKE.output, {
          status: out.status,
          contentType: out.contentType,
          body: out.body,
          headers: out.headers,
          invocationId: out.invocationId,
          durationMicros: out.durationMicros,
        }),
      ),
      undefined,
    );
  } catch (e) {
    answer(undefined, ConnectError.from(e));
  }
}

function lowerCased(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
