/**
 * The gateway's client of runtimed's dataplane port: Connect (binary) over Bun's fetch, which keeps
 * connections to each pod alive and reuses them (measured 2–3x faster than connect-node's HTTP/1.1
 * client). One transport per pod address, made on first use; each call carries the RouteFence and
 * the gateway's own bearer token.
 */
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  FunctionDataplaneService,
  RouteFenceSchema,
} from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import type { InvokeResponse } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import type { Route } from "../routing/route.ts";
import type { TokenSource } from "./token-source.ts";

export interface DataplaneInvoke {
  invocationId: string;
  body: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
  /** Time left for the call, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Most pod transports kept; the least recently made go first (they reconnect on next use). */
const MAX_TRANSPORTS = 4096;

export class DataplaneClient {
  private readonly clients = new Map<string, Client<typeof FunctionDataplaneService>>();

  constructor(private readonly token: TokenSource) {}

  private clientFor(address: string): Client<typeof FunctionDataplaneService> {
    let c = this.clients.get(address);
    if (!c) {
      c = createClient(
        FunctionDataplaneService,
        createConnectTransport({ baseUrl: `http://${address}`, useBinaryFormat: true }),
      );
      this.clients.set(address, c);
      if (this.clients.size > MAX_TRANSPORTS) this.clients.delete(this.clients.keys().next().value as string);
    }
    return c;
  }

  async invoke(route: Route, call: DataplaneInvoke): Promise<InvokeResponse> {
    const headers: Record<string, string> = {};
    const auth = this.token.header();
    if (auth) headers.authorization = auth;
    const res = await this.clientFor(route.address).invoke(
      {
        fence: create(RouteFenceSchema, {
          namespace: route.namespace,
          runName: route.name,
          runUid: route.runUID,
          podUid: route.podUID,
          attempt: route.attempt,
        }),
        invocationId: call.invocationId,
        body: call.body,
        contentType: call.contentType,
        headers: call.headers,
        timeoutMs: call.timeoutMs,
      },
      { headers, signal: call.signal, timeoutMs: call.timeoutMs },
    );
    if (!res.result) throw new Error("runtimed answered without a result");
    return res.result;
  }
}
