/**
 * The gateway's Connect router, built once and served twice: as fetch handlers (one per RPC path)
 * for the Bun listener, and through connectNodeAdapter for the node:http2 listeners.
 */
import { type ConnectRouter, type ConnectRouterOptions, createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";

export type FetchHandler = (request: Request) => Promise<Response>;

/** Room for the envelope and the other fields of a body of `maxBodyBytes` (JSON base64 is 4/3). */
export function readMaxBytes(maxBodyBytes: number): number {
  return Math.ceil(maxBodyBytes * 1.4) + 64 * 1024;
}

export function routerOptions(maxRequestBytes: number): ConnectRouterOptions {
  return { readMaxBytes: readMaxBytes(maxRequestBytes) };
}

/** RPC path (`/pkg.Service/Method`) → fetch handler. */
export function fetchHandlers(
  routes: (r: ConnectRouter) => void,
  opts: ConnectRouterOptions,
): Map<string, FetchHandler> {
  const router = createConnectRouter(opts);
  routes(router);
  const out = new Map<string, FetchHandler>();
  for (const h of router.handlers) out.set(h.requestPath, createFetchHandler(h));
  return out;
}
