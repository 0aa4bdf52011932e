/**
 * A server that accepts connections and never answers (a black-holed link, as the chaos suite's
 * cut switch makes): requests fail after their timeout, a watch after its headers timeout,
 * instead of hanging their caller forever.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { KubeClient } from "./client.ts";
import { watchStream } from "./watch.ts";

const silent = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: { data() {} },
});
afterAll(() => silent.stop(true));

const client = new KubeClient({ server: `http://127.0.0.1:${silent.port}`, namespace: "default" });

async function failsWithin<T>(p: Promise<T>, ms: number): Promise<unknown> {
  const t0 = performance.now();
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  expect(err).toBeDefined();
  expect(performance.now() - t0).toBeLessThan(ms);
  return err;
}

describe("requests to a server that never answers", () => {
  test("a JSON request fails with a TimeoutError after its timeout", async () => {
    const err = await failsWithin(client.request("GET", "/api/v1/pods", { timeoutMs: 200 }), 5000);
    expect((err as Error).name).toBe("TimeoutError");
  });

  test("a caller's own signal still aborts it before the timeout", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    await failsWithin(client.request("GET", "/api/v1/pods", { signal: ac.signal }), 5000);
  });

  test("a watch whose response headers never come fails after its headers timeout", async () => {
    const err = await failsWithin(watchStream(client, "/api/v1/pods", {}, undefined, 200).next(), 5000);
    expect(String(err)).toContain("no watch response from the apiserver in 200 ms");
  });
});
