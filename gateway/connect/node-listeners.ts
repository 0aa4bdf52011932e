/**
 * The node:http2 listeners beside the Bun one (Bun.serve has no HTTP/2 server): h2c on
 * --grpc-port (cleartext HTTP/2 with prior knowledge — gRPC, Connect and gRPC-Web) and TLS on
 * --https-port (ALPN h2 and http/1.1 — every protocol). Both serve the same Connect routes through
 * connectNodeAdapter; everything else (the plain invoke route, /openapi.json, /v1/protoset) falls
 * back to the Elysia app through a small node→fetch bridge. The TLS key pair is re-read when its
 * files change (cert-manager and the kubelet replace them; see watchKeyPair).
 */
import { type FSWatcher, readFileSync, watch } from "node:fs";
import http2, { type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import { type AddressInfo, Socket } from "node:net";
import { dirname } from "node:path";
import type { TLSSocket } from "node:tls";
import type { ConnectRouter, ConnectRouterOptions } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import { nodeToFetch } from "../http/node-bridge.ts";
import type { Invoker } from "../invoke/invoker.ts";
import { serveGrpcUnary, takesGrpcUnary } from "./grpc-unary.ts";

export interface NodeListenerDeps {
  routes: (r: ConnectRouter) => void;
  routerOptions: ConnectRouterOptions;
  /** The Elysia app, for everything that is not an RPC. */
  fallback: (request: Request) => Response | Promise<Response>;
  maxBodyBytes: number;
  log: Logger;
  /** Serves gRPC Invoke itself (grpc-unary.ts) instead of through connect-node; unset: the adapter serves everything. */
  invoker?: Invoker;
  /** `--idle-timeout`: idle connections with no call open, and TLS handshakes, are cut after this (default 30 s). */
  idleTimeoutMs?: number;
}

const DEFAULT_IDLE_MS = 30_000;

/**
 * Slow and silent clients: node:http2 keeps a connection open forever by default, so a client
 * that connects and sends nothing (or half a preface, or never opens a stream, or — on the TLS
 * port with ALPN http/1.1 — never finishes its headers) would hold a socket until the process runs
 * out of them. A connection idle for `ms` is closed unless a call is open on it: an HTTP/2 session
 * with no open stream, or an HTTP/1.1 socket with no response in progress. (An invocation may run
 * for minutes without a byte on the wire, so a connection with a call open is left alone.)
 */
function closeIdleConnections(server: http2.Http2Server | http2.Http2SecureServer, ms: number): void {
  const openStreams = new WeakMap<http2.ServerHttp2Session, number>();
  server.on("session", (session: http2.ServerHttp2Session) => {
    openStreams.set(session, 0);
    session.on("stream", (stream: http2.ServerHttp2Stream) => {
      openStreams.set(session, (openStreams.get(session) ?? 0) + 1);
      stream.once("close", () => openStreams.set(session, (openStreams.get(session) ?? 1) - 1));
    });
  });
  // HTTP/1.1 over TLS (ALPN http/1.1) is a plain socket with no session; Bun does not apply the
  // server timeout to it, so the socket gets its own.
  server.on("secureConnection", (socket: TLSSocket & { _httpMessage?: unknown }) => {
    if (socket.alpnProtocol === "h2") return;
    socket.setTimeout(ms, () => {
      if (!socket._httpMessage) socket.destroy();
    });
  });
  server.setTimeout(ms);
  // With a listener, node destroys nothing itself on a timeout: this decides.
  server.on("timeout", (idle: http2.ServerHttp2Session | (Socket & { _httpMessage?: unknown })) => {
    if (idle instanceof Socket) {
      if (!idle._httpMessage) idle.destroy();
    } else if ((openStreams.get(idle) ?? 0) === 0) idle.close(); // GOAWAY: a client starts no new call on it
  });
}

export interface Listener {
  port: number;
  close(): Promise<void>;
}

function listen(
  server: http2.Http2Server | http2.Http2SecureServer,
  host: string,
  port: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closer(
  server: http2.Http2Server | http2.Http2SecureServer,
  extra?: () => void,
): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      extra?.();
      server.close(() => resolve());
    });
}

function handler(d: NodeListenerDeps, scheme: "http" | "https") {
  const adapter = connectNodeAdapter({
    ...d.routerOptions,
    routes: d.routes,
    fallback: nodeToFetch(d.fallback, scheme, d.maxBodyBytes),
  });
  const invoker = d.invoker;
  if (!invoker) return adapter;
  return (req: Http2ServerRequest, res: Http2ServerResponse) => {
    if (takesGrpcUnary(req)) void serveGrpcUnary(invoker, d.maxBodyBytes, req, res);
    else adapter(req, res);
  };
}

export async function serveH2c(d: NodeListenerDeps, host: string, port: number): Promise<Listener> {
  const server = http2.createServer({}, handler(d, "http"));
  closeIdleConnections(server, d.idleTimeoutMs ?? DEFAULT_IDLE_MS);
  const bound = await listen(server, host, port);
  d.log.info({ host, port: bound, protocols: ["grpc", "connect", "grpc-web"] }, "h2c listening");
  return { port: bound, close: closer(server) };
}

/** How often the key pair is re-checked when no file event came (events can be missed). */
export const TLS_RECHECK_MS = 30_000;

/**
 * Watches a certificate and key for replacement: cert-manager and the kubelet update a mounted
 * Secret by swapping the volume's `..data` symlink, so a change shows as a directory event (not
 * one on the file), and an editor or `cp` writes the file in place. Either way the pair is re-read
 * a little after the last event (debounced, so a cert written before its key is not loaded alone),
 * and also every `recheckMs` in case an event was missed. A pair that does not load (half written,
 * mismatched) keeps the old one and is retried on the next event or check.
 */
export function watchKeyPair(
  files: { cert: string; key: string },
  apply: (pair: { cert: Buffer; key: Buffer }) => void,
  log: Logger,
  o: { debounceMs?: number; recheckMs?: number } = {},
): () => void {
  const read = () => ({ cert: readFileSync(files.cert), key: readFileSync(files.key) });
  const fingerprint = (p: { cert: Buffer; key: Buffer }) =>
    new Bun.CryptoHasher("sha256").update(p.cert).update(p.key).digest("hex");
  let seen = fingerprint(read());
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    timer = undefined;
    try {
      const pair = read();
      const now = fingerprint(pair);
      if (now === seen) return;
      apply(pair);
      seen = now;
      log.info({ cert: files.cert }, "reloaded the TLS certificate");
    } catch (e) {
      log.warn({ err: e }, "reloading the TLS certificate failed; keeping the old one");
    }
  };
  const soon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(check, o.debounceMs ?? 200);
    timer.unref();
  };
  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(files.cert), dirname(files.key)])) {
    try {
      const w = watch(dir, { persistent: false }, soon);
      w.on("error", (e) =>
        log.warn({ err: e, dir }, "watching the TLS directory failed; checking periodically"),
      );
      watchers.push(w);
    } catch (e) {
      log.warn({ err: e, dir }, "cannot watch the TLS directory; checking periodically");
    }
  }
  const interval = setInterval(check, o.recheckMs ?? TLS_RECHECK_MS);
  interval.unref();
  return () => {
    clearInterval(interval);
    if (timer) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}

export async function serveTls(
  d: NodeListenerDeps,
  host: string,
  port: number,
  files: { cert: string; key: string },
): Promise<Listener> {
  const server = http2.createSecureServer(
    {
      cert: readFileSync(files.cert),
      key: readFileSync(files.key),
      allowHTTP1: true,
      handshakeTimeout: d.idleTimeoutMs ?? DEFAULT_IDLE_MS,
    },
    handler(d, "https"),
  );
  closeIdleConnections(server, d.idleTimeoutMs ?? DEFAULT_IDLE_MS);
  const unwatch = watchKeyPair(files, (pair) => server.setSecureContext(pair), d.log);
  const bound = await listen(server, host, port).catch((e) => {
    unwatch();
    throw e;
  });
  d.log.info({ host, port: bound, protocols: ["grpc", "connect", "grpc-web", "http"] }, "https listening");
  return { port: bound, close: closer(server, unwatch) };
}
