import { afterAll, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "./app.ts";
import { createCallers } from "./callers.ts";
import { createMetrics } from "./metrics.ts";

/** A stand-in apiserver: 1,200 Runs in pages of `limit`, then a watch that adds one more. */
const requests: string[] = [];
const run = (i: number) => ({
  apiVersion: "kruntimes.io/v1alpha1",
  kind: "Run",
  metadata: {
    name: `r${i}`,
    namespace: "a",
    uid: `u${i}`,
    resourceVersion: "7",
    creationTimestamp: "2026-12-03T10:00:00Z",
  },
  spec: { runtime: "bash", mode: { task: {} } },
  status: { phase: "Succeeded", attempt: 1 },
});
const api = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const u = new URL(req.url);
    requests.push(`${u.pathname}?${u.searchParams}`);
    if (req.headers.get("authorization") !== "Bearer t") return Response.json({ code: 401 }, { status: 401 });
    if (u.searchParams.get("watch")) {
      expect(u.searchParams.get("resourceVersion")).toBe("7");
      const body = `${JSON.stringify({ type: "ADDED", object: run(1200) })}\n`;
      return new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode(body));
          },
        }),
      );
    }
    const from = Number(u.searchParams.get("continue") ?? "0");
    const limit = Number(u.searchParams.get("limit"));
    const to = Math.min(1200, from + limit);
    return Response.json({
      metadata: { resourceVersion: "7", ...(to < 1200 ? { continue: String(to) } : {}) },
      items: Array.from({ length: to - from }, (_, k) => run(from + k)),
    });
  },
});
afterAll(() => api.stop(true));

test("the list streams its first page at once, the rest as appends, then the watch from the list's version", async () => {
  const app = createApp({
    callers: createCallers("token", { server: `http://127.0.0.1:${api.port}`, namespace: "default" }),
    assets: new Map(),
    metrics: createMetrics(),
    log: pino({ level: "silent" }),
    gatewayNamespace: "kruntimes",
  });
  const res = await app.handle(
    new Request("http://dashboard.local/api/namespaces/a/watch/runs?labelSelector=team%3Da", {
      headers: { authorization: "Bearer t" },
    }),
  );
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("event: change")) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const events = [...text.matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => ({
    event: m[1],
    data: JSON.parse(m[2] as string) as { items?: unknown[]; complete?: boolean; item?: { name: string } },
  }));
  expect(
    events.map((e) => `${e.event}:${e.data.items?.length ?? e.data.item?.name}:${e.data.complete ?? ""}`),
  ).toEqual(["snapshot:500:false", "append:500:false", "append:200:true", "change:r1200:"]);
  expect(requests.filter((r) => r.includes("limit=500")).length).toBe(3);
  expect(requests.every((r) => r.includes("labelSelector=team%3Da"))).toBe(true);
});
