/**
 * A stand-in Runtime Server for measuring runtimed's own hop: FunctionService.Invoke answers the
 * request body at once (no worker), on a Unix socket, in its own process, served exactly as the
 * Runtime Server serves (Bun.serve + createConnectRouter + createFetchHandler). Prints "ready".
 */
import { createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import { FunctionService } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

const socket = Bun.argv[2] as string;
const router = createConnectRouter();
router.service(FunctionService, {
  invoke: (req) => ({ status: 200, contentType: req.contentType, body: req.body }),
});
const handlers = new Map(router.handlers.map((h) => [h.requestPath, createFetchHandler(h)]));
Bun.serve({
  unix: socket,
  fetch(req) {
    const h = handlers.get(new URL(req.url).pathname);
    return h ? h(req) : new Response("no", { status: 404 });
  },
});
console.log("ready");
