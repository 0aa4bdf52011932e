/**
 * Serves Connect services on Web `Request`/`Response`: the router's handlers, looked up by path
 * (exact match, one Map lookup per request), each wrapped by createFetchHandler. Connect protocol
 * only: Bun.serve speaks HTTP/1.1, where gRPC cannot run.
 */
import { type ConnectRouter, createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";

export type FetchHandler = (request: Request) => Promise<Response>;

export function connectFetchHandler(register: (router: ConnectRouter) => void): FetchHandler {
  const router = createConnectRouter({ grpc: false, grpcWeb: false, connect: true });
  register(router);
  const handlers = new Map<string, FetchHandler>();
  for (const handler of router.handlers) handlers.set(handler.requestPath, createFetchHandler(handler));
  return async (request) => {
    const path = new URL(request.url).pathname;
    const handler = handlers.get(path);
    if (handler === undefined) return new Response(`no RPC at ${path}\n`, { status: 404 });
    return handler(request);
  };
}
