import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { makeTestPki } from "../../gateway/testing/tls.ts";
import type { AdmissionDeps } from "./admission.ts";
import { serveWebhook } from "./webhook-server.ts";

const first = makeTestPki();
const second = makeTestPki();
const live = makeTestPki();

const deps: AdmissionDeps = {
  controllerUser: "system:serviceaccount:k:ctl",
  access: async (user) => user.username === "alice",
  workspace: async () => undefined,
};

afterAll(() => {
  for (const p of [first, second, live]) rmSync(p.dir, { recursive: true, force: true });
});

function review(username: string) {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u-9",
      resource: { group: "kruntimes.io", version: "v1alpha1", resource: "runs" },
      operation: "CREATE",
      namespace: "ns",
      userInfo: { username },
      object: { metadata: {}, spec: { runtime: "bash", mode: { task: {} }, workspace: { name: "w" } } },
    },
  };
}

describe("webhook server", () => {
  test("answers AdmissionReviews over HTTPS, and picks up a renewed certificate", async () => {
    copyFileSync(first.certFile, join(live.dir, "tls.crt"));
    copyFileSync(first.keyFile, join(live.dir, "tls.key"));
    const server = await serveWebhook(
      { host: "127.0.0.1", port: 0, certFile: join(live.dir, "tls.crt"), keyFile: join(live.dir, "tls.key") },
      deps,
      pino({ level: "silent" }),
    );
    const post = (body: unknown, ca: string, p = "/validate") =>
      fetch(`https://localhost:${server.port}${p}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
        tls: { ca: readFileSync(ca, "utf8") },
      } as RequestInit);
    try {
      const ok = await post(review("alice"), first.caFile);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid: "u-9", allowed: true },
      });
      const no = (await (await post(review("bob"), first.caFile)).json()) as {
        response: { allowed: boolean };
      };
      expect(no.response.allowed).toBe(false);
      expect((await post({ nope: 1 }, first.caFile)).status).toBe(400);
      expect((await post(review("alice"), first.caFile, "/other")).status).toBe(404);

      copyFileSync(second.keyFile, join(live.dir, "tls.key"));
      copyFileSync(second.certFile, join(live.dir, "tls.crt"));
      const deadline = Date.now() + 5000;
      for (;;) {
        const r = await post(review("alice"), second.caFile).catch(() => undefined);
        if (r?.status === 200) break;
        if (Date.now() > deadline) throw new Error("the renewed certificate was not picked up");
        await Bun.sleep(100);
      }
    } finally {
      await server.close();
    }
  });
});
