#!/usr/bin/env bun
/**
 * Test stand-in for runtimed (test infrastructure, not shipped): it keeps the heartbeat Lease of
 * its pod exactly as the runtimed contract says and serves /readyz and /healthz — and does
 * nothing else, so Runs bound to its pod stay Scheduled until a test acts for runtimed.
 * Test controls on the same port: POST /pause (stop renewing, stay Ready), POST /resume,
 * POST /unready and /ready (flip readiness).
 *
 * Env (set by the controller's pod template): POD_NAME, POD_NAMESPACE, POD_UID, POD_IP,
 * KRT_RUNTIME, KRT_PORT, KRT_LEASE_DURATION_SECONDS, KRT_HEARTBEAT_INTERVAL_MS.
 */
import { isNotFound, KubeClient, path, R, resolveConnection } from "@kruntimes/kube";
import { microTime } from "../kube-types.ts";

const env = process.env;
const need = (k: string) => {
  const v = env[k];
  if (!v) throw new Error(`heartbeat: ${k} is not set`);
  return v;
};
const pod = need("POD_NAME");
const namespace = need("POD_NAMESPACE");
const uid = need("POD_UID");
const runtime = need("KRT_RUNTIME");
const port = Number(env.KRT_PORT ?? "8081");
const seconds = Number(env.KRT_LEASE_DURATION_SECONDS ?? "10");
const intervalMs = Number(env.KRT_HEARTBEAT_INTERVAL_MS ?? "2000");

const client = new KubeClient(resolveConnection({ env }));
const leasePath = path(R.leases, namespace, pod);
let paused = false;
let ready = true;
let beating = false;

function lease(now: number) {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: pod,
      namespace,
      labels: { "kruntimes.io/runtime": runtime },
      ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: pod, uid }],
    },
    spec: {
      holderIdentity: uid,
      leaseDurationSeconds: seconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
    },
  };
}

async function beat(): Promise<void> {
  const now = Date.now();
  try {
    await client.patch(leasePath, { spec: { holderIdentity: uid, renewTime: microTime(now) } }, "merge");
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await client.create(path(R.leases, namespace), lease(now));
  }
  beating = true;
}

async function loop(): Promise<void> {
  for (;;) {
    if (!paused) {
      try {
        await beat();
      } catch (e) {
        console.error(`heartbeat: renewing failed: ${e instanceof Error ? e.message : e}`);
      }
    }
    await Bun.sleep(intervalMs);
  }
}

Bun.serve({
  hostname: env.POD_IP ?? "127.0.0.1",
  port,
  fetch(req) {
    const { pathname } = new URL(req.url);
    if (pathname === "/healthz") return new Response("ok\n");
    if (pathname === "/readyz")
      return new Response(ready && beating ? "ok\n" : "not ready\n", {
        status: ready && beating ? 200 : 503,
      });
    if (req.method === "POST") {
      if (pathname === "/pause") paused = true;
      else if (pathname === "/resume") paused = false;
      else if (pathname === "/unready") ready = false;
      else if (pathname === "/ready") ready = true;
      else return new Response("not found\n", { status: 404 });
      return new Response("ok\n");
    }
    return new Response("not found\n", { status: 404 });
  },
});
console.log(`heartbeat stand-in for ${namespace}/${pod} (${uid}), Lease every ${intervalMs}ms`);
await loop();
