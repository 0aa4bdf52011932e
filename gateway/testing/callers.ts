/**
 * One function per way of calling FunctionService.Invoke (plain HTTP, Connect JSON, Connect binary,
 * gRPC over h2c), plus the floors (runtimed's dataplane directly, a plain Bun echo server) — shared
 * by the gateway benchmark (bench/gateway) and tests. Each caller throws unless the answer is 200.
 */
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  FunctionDataplaneService,
  RouteFenceSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";

export type Caller = () => Promise<void>;
export type GatewayProtocol = "http" | "connect-json" | "connect-binary" | "grpc";

export interface Target {
  namespace: string;
  run: string;
  token: string;
  body: Uint8Array;
  contentType: string;
}

/** Where the gateway listens: ports on a host (cleartext), or base URLs with the TLS to verify them by. */
export type GatewayAddress =
  | { http: number; grpc: number; host?: string }
  | {
      httpBase: string;
      grpcBase: string;
      tls?: { ca?: string; serverName?: string; rejectUnauthorized?: false };
    };

export function gatewayCaller(p: GatewayProtocol, at: GatewayAddress, t: Target): Caller {
  const { httpBase, grpcBase, tls } =
    "httpBase" in at
      ? at
      : {
          httpBase: `http://${at.host ?? "127.0.0.1"}:${at.http}`,
          grpcBase: `http://${at.host ?? "127.0.0.1"}:${at.grpc}`,
          tls: undefined,
        };
  const tlsFetch = (
    tls
      ? (input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, tls } as RequestInit)
      : fetch
  ) as typeof fetch;
  const headers = { authorization: `Bearer ${t.token}` };
  if (p === "http") {
    const url = `${httpBase}/v1/namespaces/${t.namespace}/runs/${t.run}/invoke`;
    return async () => {
      const res = await tlsFetch(url, {
        method: "POST",
        body: t.body,
        headers: { ...headers, "content-type": t.contentType },
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    };
  }
  const transport =
    p === "grpc"
      ? createGrpcTransport({
          baseUrl: grpcBase,
          ...(tls
            ? {
                nodeOptions: {
                  ...(tls.ca ? { ca: tls.ca } : {}),
                  ...(tls.serverName ? { servername: tls.serverName } : {}),
                  ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
                },
              }
            : {}),
        })
      : createConnectTransport({
          baseUrl: httpBase,
          useBinaryFormat: p === "connect-binary",
          fetch: tlsFetch,
        });
  const client = createClient(FunctionService, transport);
  const req = { namespace: t.namespace, run: t.run, body: t.body, contentType: t.contentType };
  return async () => {
    const res = await client.invoke(req, { headers });
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  };
}

export interface DirectTarget {
  address: string;
  token: string;
  fence: { namespace: string; runName: string; runUid: string; podUid: string; attempt: number };
  body: Uint8Array;
  contentType: string;
}

/** runtimed's dataplane port called directly the way the gateway calls it (Connect binary, Bun fetch). */
export function directCaller(t: DirectTarget): Caller {
  const client = createClient(
    FunctionDataplaneService,
    createConnectTransport({ baseUrl: `http://${t.address}`, useBinaryFormat: true }),
  );
  const fence = create(RouteFenceSchema, t.fence);
  let n = 0;
  return async () => {
    const res = await client.invoke(
      { fence, invocationId: `bench-${n++}`, body: t.body, contentType: t.contentType },
      { headers: { authorization: `Bearer ${t.token}` } },
    );
    if ((res.result?.status ?? 0) !== 200) throw new Error(`status ${res.result?.status}`);
  };
}

/** A plain Bun.serve echo server and its caller: the floor of an HTTP round trip here. */
export function startEchoFloor(): { caller: (body: Uint8Array) => Caller; stop(): void } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      return new Response(await req.arrayBuffer(), { headers: { "content-type": "application/json" } });
    },
  });
  const url = `http://127.0.0.1:${server.port}/`;
  return {
    caller: (body) => async () => {
      const res = await fetch(url, { method: "POST", body });
      await res.arrayBuffer();
    },
    stop: () => server.stop(true),
  };
}
