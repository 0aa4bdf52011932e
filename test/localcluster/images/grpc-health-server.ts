/**
 * A gRPC health server for probe tests (h2c via node:http2, no deps): answers
 * grpc.health.v1.Health/Check with SERVING, or NOT_SERVING while the file $NOT_SERVING_FLAG exists.
 * Binds $POD_IP:$PORT (default 9090).
 */
import { existsSync } from "node:fs";
import http2 from "node:http2";

const host = process.env.POD_IP ?? "127.0.0.1";
const port = Number(process.env.PORT ?? 9090);
const flag = process.env.NOT_SERVING_FLAG ?? "";

const server = http2.createServer();
server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
  if (headers[":path"] !== "/grpc.health.v1.Health/Check") {
    stream.respond(
      { ":status": 200, "content-type": "application/grpc", "grpc-status": "12" },
      { endStream: true },
    );
    return;
  }
  stream.on("data", () => {});
  stream.on("end", () => {
    const status = flag && existsSync(flag) ? 2 : 1; // NOT_SERVING : SERVING
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, status]));
  });
});
server.listen(port, host, () => console.log(`grpc health on ${host}:${port}`));
