/**
 * grpc.health.v1.Health/Check over cleartext HTTP/2 (h2c) with node:http2, which works under Bun.
 * The two messages are tiny, so they are encoded by hand:
 *   HealthCheckRequest  { string service = 1; }              → 0x0a <varint len> <utf8>
 *   HealthCheckResponse { ServingStatus status = 1; }        → 0x08 <varint>; SERVING = 1
 * Each message travels in a gRPC frame: 1 byte compressed flag, 4 bytes big-endian length.
 */
import http2 from "node:http2";

export const SERVING = 1;

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

export function encodeHealthCheckRequest(service: string): Buffer {
  const s = Buffer.from(service, "utf8");
  const msg = s.length ? Buffer.concat([Buffer.from([0x0a, ...varint(s.length)]), s]) : Buffer.alloc(0);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(msg.length, 1);
  return Buffer.concat([frame, msg]);
}

/** The `status` field of the first framed HealthCheckResponse; 0 (UNKNOWN) when absent. */
export function decodeHealthCheckResponse(body: Buffer): number {
  if (body.length < 5) throw new Error("grpc: short response frame");
  if (body[0] !== 0) throw new Error("grpc: compressed responses are not supported");
  const len = body.readUInt32BE(1);
  const msg = body.subarray(5, 5 + len);
  let i = 0;
  let status = 0;
  while (i < msg.length) {
    const tag = msg[i++]!;
    let v = 0;
    let shift = 0;
    const wire = tag & 7;
    if (wire === 0) {
      for (;;) {
        const b = msg[i++]!;
        v |= (b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
      }
      if (tag >> 3 === 1) status = v;
    } else if (wire === 2) {
      let n = 0;
      for (;;) {
        const b = msg[i++]!;
        n |= (b & 0x7f) << shift;
        if (!(b & 0x80)) break;
        shift += 7;
      }
      i += n;
    } else {
      throw new Error(`grpc: unexpected wire type ${wire}`);
    }
  }
  return status;
}

/** Resolves the serving status; rejects on a transport error, a non-OK grpc-status or timeout. */
export function grpcHealthCheck(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${host}:${port}`);
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`grpc health check timed out after ${timeoutMs}ms`));
    }, timeoutMs);
    const fail = (e: unknown) => {
      clearTimeout(timer);
      session.destroy();
      reject(e instanceof Error ? e : new Error(String(e)));
    };
    session.on("error", fail);
    const req = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
      "user-agent": "kube-probe/1.37",
    });
    const chunks: Buffer[] = [];
    let grpcStatus: string | undefined;
    let message = "";
    req.on("response", (headers) => {
      if (headers["grpc-status"] !== undefined) grpcStatus = String(headers["grpc-status"]);
    });
    req.on("trailers", (trailers) => {
      grpcStatus = String(trailers["grpc-status"] ?? grpcStatus ?? "");
      message = String(trailers["grpc-message"] ?? "");
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", fail);
    req.on("end", () => {
      clearTimeout(timer);
      session.close();
      if (grpcStatus !== "0")
        return reject(new Error(`grpc-status ${grpcStatus ?? "missing"} ${message}`.trim()));
      try {
        resolve(decodeHealthCheckResponse(Buffer.concat(chunks)));
      } catch (e) {
        reject(e);
      }
    });
    req.end(encodeHealthCheckRequest(service));
  });
}
