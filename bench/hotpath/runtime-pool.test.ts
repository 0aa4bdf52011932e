import { expect, test } from "bun:test";
import { KubeClient } from "@kruntimes/kube";
import { waitPoolReady } from "./runtime-pool.ts";

// Nothing listens here: a call that reached the network would fail with a connection error.
const client = new KubeClient({ server: "http://127.0.0.1:9", namespace: "default" });
const pool = { namespace: "ns", name: "p", image: "bash", pods: 1, slotsPerPod: 1 };

test("an interrupt that came before the wait (e.g. during the Runtime's create) ends it at once", async () => {
  const reason = new Error("interrupted");
  const t0 = performance.now();
  // The old code listened for "abort" only from now on, missed it, and watched until the timeout.
  await expect(waitPoolReady(client, pool, 60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  expect(performance.now() - t0).toBeLessThan(1000);
});
