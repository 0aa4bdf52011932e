import { describe, expect, test } from "bun:test";
import http2 from "node:http2";
import { decodeHealthCheckResponse, encodeHealthCheckRequest, grpcHealthCheck } from "./grpc-health.ts";
import { runHandler } from "./handlers.ts";
import { ProbeState, probeTiming } from "./probe-state.ts";

describe("probe thresholds", () => {
  test("readiness needs successThreshold successes and failureThreshold failures in a row", () => {
    const s = new ProbeState(
      "readiness",
      probeTiming("readiness", { successThreshold: 2, failureThreshold: 2 }),
    );
    expect(s.result).toBe("failure");
    expect(s.observe(true)).toBe(false);
    expect(s.observe(true)).toBe(true);
    expect(s.result).toBe("success");
    expect(s.observe(false)).toBe(false);
    expect(s.observe(true)).toBe(false);
    expect(s.observe(false)).toBe(false);
    expect(s.observe(false)).toBe(true);
    expect(s.result).toBe("failure");
    expect(s.onHold).toBe(false);
  });
  test("a reported liveness failure holds until the next container attempt", () => {
    const s = new ProbeState("liveness", probeTiming("liveness", { failureThreshold: 1 }));
    expect(s.result).toBe("success");
    expect(s.observe(false)).toBe(true);
    expect(s.onHold).toBe(true);
    expect(s.observe(true)).toBe(false);
  });
  test("startup starts unknown; liveness and startup ignore successThreshold; defaults", () => {
    const t = probeTiming("startup", { successThreshold: 5 });
    expect(t).toEqual({
      initialDelayMs: 0,
      periodMs: 10_000,
      timeoutMs: 1000,
      successThreshold: 1,
      failureThreshold: 3,
    });
    const s = new ProbeState("startup", t);
    expect(s.result).toBe("unknown");
    expect(s.observe(true)).toBe(true);
  });
  test("readiness drops at once when the container stops", () => {
    const s = new ProbeState("readiness", probeTiming("readiness", {}));
    s.observe(true);
    expect(s.containerStopped()).toBe(true);
    expect(s.result).toBe("failure");
  });
});

describe("gRPC health", () => {
  test("request and response encode by hand", () => {
    expect([...encodeHealthCheckRequest("svc")]).toEqual([0, 0, 0, 0, 5, 0x0a, 3, 0x73, 0x76, 0x63]);
    expect([...encodeHealthCheckRequest("")]).toEqual([0, 0, 0, 0, 0]);
    expect(decodeHealthCheckResponse(Buffer.from([0, 0, 0, 0, 2, 0x08, 1]))).toBe(1);
    expect(decodeHealthCheckResponse(Buffer.from([0, 0, 0, 0, 0]))).toBe(0);
  });
  test("a Check against an h2c server: SERVING, NOT_SERVING, and a refused port", async () => {
    let status = 1;
    const server = http2.createServer();
    server.on("stream", (stream: http2.ServerHttp2Stream) => {
      stream.on("data", () => {});
      stream.on("end", () => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, status]));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      expect(await grpcHealthCheck("127.0.0.1", port, "", 2000)).toBe(1);
      status = 2;
      const out = await runHandler(
        { grpc: { port } },
        { podIP: "127.0.0.1", ports: [], pid: () => undefined, env: {} },
        2000,
      );
      expect(out.ok).toBe(false);
    } finally {
      server.close();
    }
    await expect(grpcHealthCheck("127.0.0.1", port, "", 1000)).rejects.toThrow();
  });
});

describe("probe handlers", () => {
  test("httpGet: 2xx/3xx succeed, named ports resolve, headers are sent; tcpSocket connects", async () => {
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => new Response("x", { status: req.headers.get("x-want") === "ok" ? 204 : 500 }),
    });
    const t = {
      podIP: "127.0.0.1",
      ports: [{ name: "web", containerPort: server.port! }],
      pid: () => undefined,
      env: {},
    };
    try {
      const ok = await runHandler(
        { httpGet: { port: "web", path: "hz", httpHeaders: [{ name: "X-Want", value: "ok" }] } },
        t,
        1000,
      );
      expect(ok.ok).toBe(true);
      expect((await runHandler({ httpGet: { port: server.port! } }, t, 1000)).ok).toBe(false);
      expect((await runHandler({ tcpSocket: { port: "web" } }, t, 1000)).ok).toBe(true);
      expect((await runHandler({ httpGet: { port: "nope" } }, t, 1000)).output).toMatch(/named port/);
    } finally {
      server.stop(true);
    }
    expect((await runHandler({ tcpSocket: { port: server.port! } }, t, 1000)).ok).toBe(false);
  });
});
