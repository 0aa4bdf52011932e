/**
 * The gateway's client of `kruntimes.gateway.v1.SessionService` as runtimed serves it on its
 * dataplane port: the same messages the caller sent, forwarded with the route's fence and the
 * caller's username in request headers, and the gateway's own bearer token. Connect binary over
 * Bun `fetch` (connections kept alive per pod), one transport per pod address. Streams are read
 * message by message, so a streamed file or command output never sits whole in the gateway.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import type { TokenSource } from "../dataplane/token-source.ts";
import type { Route } from "../routing/route.ts";

export type SessionClient = Client<typeof SessionService>;

/** Request headers runtimed reads the fence and the caller from (dataplane.proto). */
export const FenceHeader = {
  runUID: "x-kruntimes-run-uid",
  podUID: "x-kruntimes-pod-uid",
  attempt: "x-kruntimes-attempt",
  caller: "x-kruntimes-caller",
} as const;

const MAX_TRANSPORTS = 4096;

export class SessionDataplane {
  private readonly clients = new Map<string, SessionClient>();

  constructor(private readonly token: TokenSource) {}

  client(address: string): SessionClient {
    let c = this.clients.get(address);
    if (!c) {
      c = createClient(
        SessionService,
        createConnectTransport({ baseUrl: `http://${address}`, useBinaryFormat: true }),
      );
      this.clients.set(address, c);
      if (this.clients.size > MAX_TRANSPORTS) this.clients.delete(this.clients.keys().next().value as string);
    }
    return c;
  }

  /** Headers of one forwarded call: the fence of `route`, the caller, the gateway's token. */
  headers(route: Route, caller: string): Record<string, string> {
    const h: Record<string, string> = {
      [FenceHeader.runUID]: route.runUID,
      [FenceHeader.podUID]: route.podUID,
      [FenceHeader.attempt]: String(route.attempt),
      [FenceHeader.caller]: caller,
    };
    const auth = this.token.header();
    if (auth) h.authorization = auth;
    return h;
  }
}
