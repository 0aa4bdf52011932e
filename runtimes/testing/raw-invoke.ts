/**
 * Invoke without an RPC client: the encoded InvokeRequest POSTed as Connect binary with plain
 * fetch over the Unix socket, as runtimed's dataplane fast path forwards it. For benchmarks.
 */
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import {
  type InvokeRequestSchema as InvokeRequestDesc,
  InvokeRequestSchema,
  type InvokeResponse,
  InvokeResponseSchema,
} from "../../api/gen/kruntimes/runtime/v1/function_pb.ts";

export async function rawInvoke(
  socketPath: string,
  init: MessageInitShape<typeof InvokeRequestDesc>,
): Promise<{ status: number; response: InvokeResponse | undefined }> {
  const res = await fetch("http://runtime-server/kruntimes.runtime.v1.FunctionService/Invoke", {
    method: "POST",
    body: toBinary(InvokeRequestSchema, create(InvokeRequestSchema, init)),
    headers: { "Content-Type": "application/proto", "Connect-Protocol-Version": "1" },
    unix: socketPath,
  } as RequestInit);
  const bytes = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    response: res.status === 200 ? fromBinary(InvokeResponseSchema, bytes) : undefined,
  };
}
