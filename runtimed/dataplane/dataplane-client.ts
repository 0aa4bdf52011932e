/**
 * A client of runtimed's dataplane port, as the gateway (and the e2e tests and the benchmark)
 * call it: connect-web's transport over Bun's fetch (kept-alive connections), Connect protocol
 * (binary by default), the bearer token on every call. `Code`, `ConnectError` and `RouteFailure`
 * are re-exported so callers outside this workspace need no Connect dependency of their own.
 */
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  FunctionDataplaneService,
  InvokeRequestSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { InvokeRequestSchema as ServerInvokeRequestSchema } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

export { Code, ConnectError } from "@connectrpc/connect";
export {
  RouteFailure_Reason,
  RouteFailureSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
export {
  InvokeFailure_Reason,
  InvokeFailureSchema,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

export type DataplaneClient = Client<typeof FunctionDataplaneService>;

export interface DataplaneClientOptions {
  /** `http://<pod IP>:<dataplane port>`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; a function is re-read per call (rotating tokens). */
  token?: string | (() => string);
  /** JSON instead of binary protobuf (for debugging). */
  json?: boolean;
}

export function dataplaneClient(o: DataplaneClientOptions): DataplaneClient {
  const auth: Interceptor = (next) => (req) => {
    const t = typeof o.token === "function" ? o.token() : o.token;
    if (t) req.header.set("authorization", `Bearer ${t}`);
    return next(req);
  };
  return createClient(
    FunctionDataplaneService,
    createConnectTransport({
      baseUrl: o.baseUrl,
      useBinaryFormat: !o.json,
      interceptors: [auth],
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        fetch(input, { ...init, timeout: false } as RequestInit)) as typeof fetch,
    }),
  );
}

/** A dataplane `InvokeRequest` as Connect binary bytes (for raw-fetch callers such as the bench). */
export function encodeInvokeRequest(init: MessageInitShape<typeof InvokeRequestSchema>): Uint8Array {
  return toBinary(InvokeRequestSchema, create(InvokeRequestSchema, init));
}

/** The Runtime Server's `FunctionService.Invoke` request as bytes (to call the socket directly). */
export function encodeServerInvokeRequest(
  init: MessageInitShape<typeof ServerInvokeRequestSchema>,
): Uint8Array {
  return toBinary(ServerInvokeRequestSchema, create(ServerInvokeRequestSchema, init));
}

export { fromBinary } from "@bufbuild/protobuf";
export { InvokeResponseSchema } from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
/** The dataplane answer around a Runtime Server answer (to decode both alike). */
export { wrapResult } from "./fast-path.ts";
