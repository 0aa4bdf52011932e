import { describe, expect, test } from "bun:test";
import pino from "pino";
import { allowedMethod, createApp } from "./app.ts";
import { createCallers } from "./callers.ts";
import { createMetrics } from "./metrics.ts";

const app = createApp({
  callers: createCallers("token", { server: "https://127.0.0.1:1", namespace: "default" }),
  assets: new Map([
    ["/index.html", { body: new TextEncoder().encode("<html>"), type: "text/html", immutable: false }],
  ]),
  metrics: createMetrics(),
  log: pino({ level: "silent" }),
  gatewayNamespace: "kruntimes",
});
const call = (method: string, path: string, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://dashboard${path}`, { method, headers }));

describe("the write guard", () => {
  test("only GET, HEAD and the invoke POST pass", () => {
    expect(allowedMethod("GET", "/api/namespaces")).toBe(true);
    expect(allowedMethod("HEAD", "/")).toBe(true);
    expect(allowedMethod("POST", "/api/namespaces/a/runs/b/invoke")).toBe(true);
    expect(allowedMethod("POST", "/api/namespaces/a/runs/b/invoke/x")).toBe(false);
    expect(allowedMethod("POST", "/api/namespaces/a/runs/b")).toBe(false);
    expect(allowedMethod("PUT", "/api/namespaces/a/runs/b/invoke")).toBe(false);
  });

  test("writes are answered 405 with Allow, before any route", async () => {
    for (const m of ["POST", "PUT", "PATCH", "DELETE"]) {
      const res = await call(m, "/api/namespaces/a/watch/runs");
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD");
      expect(((await res.json()) as { reason: string }).reason).toBe("MethodNotAllowed");
    }
  });

  test("the invoke POST needs the x-requested-by header (no cross-site form can send it)", async () => {
    expect((await call("POST", "/api/namespaces/a/runs/b/invoke")).status).toBe(400);
  });
});

describe("token mode", () => {
  test("API requests without a token are 401, with what to do", async () => {
    const res = await call("GET", "/api/session");
    expect(res.status).toBe(401);
    expect(((await res.json()) as { next: string }).next).toContain("kubectl create token");
  });

  test("every other path is the UI (deep links), unknown API paths are 404", async () => {
    const ui = await call("GET", "/ns/a/runs/b");
    expect(ui.status).toBe(200);
    expect(ui.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect((await call("GET", "/api/nope")).status).toBe(404);
    expect((await call("GET", "/missing.js")).status).toBe(404);
    expect(await (await call("GET", "/healthz")).text()).toBe("ok");
  });
});
