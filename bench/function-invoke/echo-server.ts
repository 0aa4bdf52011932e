/**
 * The floor: a plain Bun.serve HTTP echo (POST body back, same content type), in its own process
 * so client and server do not share an event loop — as runtimed and the Runtime Server do not.
 * Prints its port on stdout.
 */
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = await req.arrayBuffer();
    return new Response(body, { headers: { "content-type": req.headers.get("content-type") ?? "" } });
  },
});
console.log(server.port);
