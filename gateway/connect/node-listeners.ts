/**
 * The node:http2 listeners beside the Bun one (Bun.serve has no HTTP/2 server): h2c on
 * --grpc-port (cleartext HTTP/2 with prior knowledge — gRPC, Connect and gRPC-Web) and TLS on
 * --https-port (ALPN h2 and http/1.1 — every protocol). Both serve the same Connect routes through
 * connectNodeAdapter; everything else (the plain invoke route, /openapi.json, /v1/protoset) falls
 * back to the Elysia app through a small node→fetch bridge. The TLS key pair is re-read when its
 * files change (cert-manager rotates them in place).
 */
import { readFileSync, statSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter, ConnectRouterOptions } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import { nodeToFetch } from "../http/node-bridge.ts";

export interface NodeListenerDeps {
  routes: (r: ConnectRouter) => void;
  routerOptions: ConnectRouterOptions;
  /** The Elysia app, for everything that is not an RPC. */
  fallback: (request: Request) => Response | Promise<Response>;
  maxBodyBytes: number;
  log: Logger;
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
  return connectNodeAdapter({
    ...d.routerOptions,
    routes: d.routes,
    fallback: nodeToFetch(d.fallback, scheme, d.maxBodyBytes),
  });
}

export async function serveH2c(d: NodeListenerDeps, host: string, port: number): Promise<Listener> {
  const server = http2.createServer({}, handler(d, "http"));
  const bound = await listen(server, host, port);
  d.log.info({ host, port: bound, protocols: ["grpc", "connect", "grpc-web"] }, "h2c listening");
  return { port: bound, close: closer(server) };
}

export async function serveTls(
  d: NodeListenerDeps,
  host: string,
  port: number,
  files: { cert: string; key: string },
): Promise<Listener> {
  const read = () => ({ cert: readFileSync(files.cert), key: readFileSync(files.key) });
  const mtimes = () => `${statSync(files.cert).mtimeMs}/${statSync(files.key).mtimeMs}`;
  let seen = mtimes();
  const server = http2.createSecureServer({ ...read(), allowHTTP1: true }, handler(d, "https"));
  const timer = setInterval(() => {
    try {
      const now = mtimes();
      if (now === seen) return;
      server.setSecureContext(read());
      seen = now;
      d.log.info({ cert: files.cert }, "reloaded the TLS certificate");
    } catch (e) {
      d.log.warn({ err: e }, "reloading the TLS certificate failed; keeping the old one");
    }
  }, 30_000);
  timer.unref();
  const bound = await listen(server, host, port);
  d.log.info({ host, port: bound, protocols: ["grpc", "connect", "grpc-web", "http"] }, "https listening");
  return { port: bound, close: closer(server, () => clearInterval(timer)) };
}
