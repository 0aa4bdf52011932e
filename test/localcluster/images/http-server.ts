/**
 * A small HTTP server for node-agent tests. Binds $POD_IP (or $HOST) : $PORT (default 8080).
 *   GET  /          → "hello from <hostname> <ip>"
 *   GET  /healthz   → 200, or 503 after POST /ready?v=false (readiness toggle)
 *   POST /exit?code=N  exits the process with code N (restart tests)
 * One log line per request on stdout; "stopping" on SIGTERM (graceful deletion tests).
 */
const host = process.env.POD_IP ?? process.env.HOST ?? "127.0.0.1";
const port = Number(process.env.PORT ?? 8080);
let ready = true;

Bun.serve({
  hostname: host,
  port,
  fetch(req) {
    const url = new URL(req.url);
    console.log(`${req.method} ${url.pathname}${url.search}`);
    if (url.pathname === "/healthz")
      return new Response(ready ? "ok" : "not ready", { status: ready ? 200 : 503 });
    if (req.method === "POST" && url.pathname === "/ready") {
      ready = url.searchParams.get("v") !== "false";
      return new Response(`ready=${ready}`);
    }
    if (req.method === "POST" && url.pathname === "/exit") {
      setTimeout(() => process.exit(Number(url.searchParams.get("code") ?? 1)), 10);
      return new Response("exiting");
    }
    return new Response(`hello from ${process.env.HOSTNAME ?? "?"} ${host}\n`);
  },
});
console.log(`listening on ${host}:${port}`);
process.on("SIGTERM", () => {
  console.log("stopping");
  process.exit(0);
});
