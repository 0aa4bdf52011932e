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
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
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
    { cert: readFileSync(files.cert), key: readFileSync(files.key), allowHTTP1: true },
    handler(d, "https"),
  );
  const unwatch = watchKeyPair(files, (pair) => server.setSecureContext(pair), d.log);
  const bound = await listen(server, host, port).catch((e) => {
    unwatch();
    throw e;
  });
  d.log.info({ host, port: bound, protocols: ["grpc", "connect", "grpc-web", "http"] }, "https listening");
  return { port: bound, close: closer(server, unwatch) };
}
