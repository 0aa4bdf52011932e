/**
 * The hot path: Invoke as Connect unary with binary protobuf (what runtimed forwards) decoded,
 * served and encoded here, without the Connect router's generic machinery. Anything else (JSON,
 * compression, a Connect-Timeout-Ms header, GET) goes through the router; the wire format is the
 * same either way: 200 + application/proto, or the Connect error JSON with its HTTP status.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import {
  type InvokeRequest,
  InvokeRequestSchema,
  type InvokeResponse,
  InvokeResponseSchema,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";

export const INVOKE_PATH = "/kruntimes.runtime.v1.FunctionService/Invoke";

const protoHeaders = { "Content-Type": "application/proto" };
const errorHeaders = { "Content-Type": "application/json" };

/** True when the fast path serves this request (the caller checked the path). */
export function fastPathEligible(request: Request): boolean {
  const h = request.headers;
  if (request.method !== "POST" || h.get("content-type") !== "application/proto") return false;
  const encoding = h.get("content-encoding");
  return (encoding === null || encoding === "identity") && !h.has("connect-timeout-ms");
}

export async function serveInvokeFast(
  request: Request,
  invoke: (req: InvokeRequest, signal: AbortSignal) => Promise<InvokeResponse>,
  toError: (error: unknown) => ConnectError,
): Promise<Response> {
  try {
    const req = fromBinary(InvokeRequestSchema, new Uint8Array(await request.arrayBuffer()));
    const res = await invoke(req, request.signal);
    return new Response(toBinary(InvokeResponseSchema, res), { headers: protoHeaders });
  } catch (error) {
    const ce = toError(error);
    return new Response(errorToJsonBytes(ce, {}), {
      status: codeToHttpStatus(ce.code),
      headers: errorHeaders,
    });
  }
}
