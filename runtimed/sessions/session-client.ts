/**
 * A client of the SessionService runtimed serves on its dataplane port, as the gateway forwards
 * to it (and the e2e tests and the benchmark call it): Connect binary over Bun's fetch, the bearer
 * token and the route fence in headers, and the caller's username for the audit log.
 */
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { FENCE_HEADERS } from "./session-service.ts";

export { Code, ConnectError } from "@connectrpc/connect";

export type SessionClient = Client<typeof SessionService>;

export interface SessionClientOptions {
  /** `http://<pod IP>:<dataplane port>`. */
  baseUrl: string;
  token: string;
  fence: { runUid: string; podUid: string; attempt: number };
  /** Username for the audit records (the gateway sends its TokenReview's). */
  caller?: string;
  json?: boolean;
}

export function sessionClient(o: SessionClientOptions): SessionClient {
  const headers: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${o.token}`);
    req.header.set(FENCE_HEADERS.runUID, o.fence.runUid);
    req.header.set(FENCE_HEADERS.podUID, o.fence.podUid);
    req.header.set(FENCE_HEADERS.attempt, String(o.fence.attempt));
    if (o.caller) req.header.set(FENCE_HEADERS.caller, o.caller);
    return next(req);
  };
  return createClient(
    SessionService,
    createConnectTransport({
      baseUrl: o.baseUrl,
      useBinaryFormat: !o.json,
      interceptors: [headers],
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        fetch(input, { ...init, timeout: false } as RequestInit)) as typeof fetch,
    }),
  );
}
