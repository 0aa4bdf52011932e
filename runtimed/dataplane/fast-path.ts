/**
 * The dataplane's hot path: Connect unary with binary protobuf (what the gateway sends) handled
 * without the router's generic machinery, and forwarded to the Runtime Server as raw Connect
 * binary over the kept-alive Unix socket connection. The server's answer bytes are wrapped, not
 * decoded and re-encoded, into the dataplane's `InvokeResponse` (field 1); its error responses
 * (Connect JSON with the `InvokeFailure` detail) are passed through byte for byte. Anything else
 * — Connect JSON, gRPC-Web, compressed bodies, GET — goes to the Connect router, which gives the
 * same answers. Measured (bench/function-invoke/hop.ts): the router path costs about as much
 * again as the Runtime Server's own hop.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  codeToHttpStatus,
  errorFromJsonBytes,
  errorToJsonBytes,
  parseTimeout,
} from "@connectrpc/connect/protocol-connect";
import { InvokeRequestSchema as DataplaneInvokeRequestSchema } from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { InvokeRequestSchema } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import type { InvocationResult } from "../metrics.ts";
import type { DataplaneDeps } from "./dataplane-server.ts";
import { checkFence } from "./fence.ts";
import { resultOfError } from "./invoke-result.ts";
import { serverUnreachable } from "./server-unreachable.ts";

export const INVOKE_PATH = "/kruntimes.dataplane.v1.FunctionDataplaneService/Invoke";
const SERVER_INVOKE = "http://runtime-server/kruntimes.runtime.v1.FunctionService/Invoke";
const MAX_TIMEOUT_MS = 0xffff_ffff;

export type FastPathDeps = Omit<DataplaneDeps, "host" | "port" | "functions"> & { socketPath: string };

/** True for a request the fast path serves exactly as the router would. */
export function takesFastPath(req: Request): boolean {
  if (req.method !== "POST" || req.headers.get("content-type") !== "application/proto") return false;
  const enc = req.headers.get("content-encoding");
  return enc === null || enc === "identity";
}

/** `bytes` with a top-level field 5 (`InvokeResponse.handler_error`, length-delimited). */
export function hasHandlerError(bytes: Uint8Array): boolean {
  let i = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[i++] as number;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80 || i >= bytes.length) return v;
      shift += 7;
    }
  };
  while (i < bytes.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 5 && wire === 2) return true;
    if (wire === 0) varint();
    else if (wire === 2) i += varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else return false;
  }
  return false;
}

/** The dataplane `InvokeResponse{result: <server answer>}` around the server's bytes. */
export function wrapResult(answer: Uint8Array): Uint8Array {
  const len: number[] = [];
  let n = answer.length;
  while (n >= 0x80) {
    len.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  len.push(n);
  const out = new Uint8Array(1 + len.length + answer.length);
  out[0] = 0x0a;
  out.set(len, 1);
  out.set(answer, 1 + len.length);
  return out;
}

function errorResponse(err: ConnectError): Response {
  return new Response(errorToJsonBytes(err, {}), {
    status: codeToHttpStatus(err.code),
    headers: { "content-type": "application/json" },
  });
}

export async function fastInvoke(req: Request, d: FastPathDeps): Promise<Response> {
  const t0 = performance.now();
  let result: InvocationResult = "error";
  let forwarded = false;
  try {
    await d.auth.check(req.headers.get("authorization"));
    let inv: ReturnType<typeof fromBinary<typeof DataplaneInvokeRequestSchema>>;
    try {
      inv = fromBinary(DataplaneInvokeRequestSchema, new Uint8Array(await req.arrayBuffer()));
    } catch (e) {
      throw new ConnectError(
        `cannot decode the request: ${e instanceof Error ? e.message : e}`,
        Code.InvalidArgument,
      );
    }
    const served = checkFence(inv.fence, { podUID: d.podUID, table: d.table, draining: d.draining() });
    if (served instanceof ConnectError) throw served;
    const deadline = parseTimeout(req.headers.get("connect-timeout-ms"), MAX_TIMEOUT_MS);
    const timeoutMs = inv.timeoutMs || (typeof deadline.timeoutMs === "number" ? deadline.timeoutMs : 0);
    const body = toBinary(
      InvokeRequestSchema,
      create(InvokeRequestSchema, {
        runUid: inv.fence?.runUid ?? "",
        attempt: served.attempt,
        invocationId: inv.invocationId,
        body: inv.body,
        contentType: inv.contentType,
        headers: inv.headers,
        timeoutMs,
      }),
    );
    forwarded = true;
    d.metrics.invocationsInFlight.inc();
    let res: Response;
    try {
      res = await fetch(SERVER_INVOKE, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/proto",
          "connect-protocol-version": "1",
          ...(timeoutMs ? { "connect-timeout-ms": String(timeoutMs) } : {}),
        },
        signal: req.signal,
        unix: d.socketPath,
        timeout: false,
      } as RequestInit);
    } catch (e) {
      throw serverUnreachable(e);
    }
    const answer = new Uint8Array(await res.arrayBuffer());
    if (res.status === 200) {
      result = hasHandlerError(answer) ? "handler_error" : "ok";
      return new Response(wrapResult(answer), { headers: { "content-type": "application/proto" } });
    }
    // The server's own error, unchanged (its status, its Connect JSON body with the detail).
    result = resultOfError(errorFromJsonBytes(answer, undefined, new ConnectError("", Code.Unknown)));
    return new Response(answer, {
      status: res.status,
      headers: { "content-type": res.headers.get("content-type") ?? "application/json" },
    });
  } catch (e) {
    const err = ConnectError.from(e);
    result = resultOfError(err);
    return errorResponse(err);
  } finally {
    if (forwarded) {
      d.metrics.invocationsInFlight.dec();
      d.metrics.invocationDuration.observe((performance.now() - t0) / 1000);
    }
    d.metrics.invocations.inc({ result });
  }
}
