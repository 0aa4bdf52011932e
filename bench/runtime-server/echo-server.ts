/**
 * The floor of the function benchmark: a plain Bun.serve HTTP server on a Unix socket that
 * answers every POST with its body. Run as its own process, like the Runtime Server.
 * bun bench/runtime-server/echo-server.ts <socket>
 */
import { rmSync } from "node:fs";

const socket = process.argv[2];
if (socket === undefined) throw new Error("usage: echo-server.ts <socket>");
rmSync(socket, { force: true });
const server = Bun.serve({
  unix: socket,
  async fetch(request) {
    return new Response(await request.arrayBuffer(), {
      headers: { "Content-Type": "application/octet-stream" },
    });
  },
});
process.on("SIGTERM", () => {
  server.stop(true);
  rmSync(socket, { force: true });
  process.exit(0);
});
process.stdout.write("ready\n");
