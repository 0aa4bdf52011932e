#!/usr/bin/env bun
/**
 * `exec echo` of a bash session through the gateway vs at runtimed's dataplane port, in the same
 * run, on the local cluster (real controller, real runtimed and bash Runtime Server, the gateway as
 * a real process with real TokenReview/SubjectAccessReview — decisions cached after the first
 * call, as in steady state). Sequential calls, interleaved in rounds (direct, gateway Connect
 * binary over HTTP/1.1, gateway gRPC over h2c) so load drift hits every variant alike; p50/p95 per
 * variant over all rounds, and the gateway's own hop (gateway − direct) per round.
 * `KRT_CLUSTER_DIR=/tmp/krt-x KUBECONFIG=/tmp/krt-x/admin.kubeconfig bun bench/session-gateway/main.ts
 * [--execs 100] [--rounds 5]`. Prints a Markdown report (recorded in bench/results/).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Run, RunResource } from "@kruntimes/api";
import { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import { path } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import {
  createClient,
  createConnectTransport,
  createGrpcTransport,
} from "../../gateway/session/testing/clients.ts";
import { startGatewayProcess } from "../../gateway/testing/gateway-process.ts";
import { sessionClient } from "../../runtimed/sessions/session-client.ts";
import { eventually, testCluster, testNamespace } from "../../test/support/cluster.ts";
import {
  createGatewayRbac,
  createServiceAccount,
  deleteGatewayRbac,
  gatewayFiles,
  grantRuns,
  saToken,
} from "../../test/support/gateway.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { machineInfo } from "../hotpath/machine.ts";

const { values: args } = parseArgs({
  options: { execs: { type: "string", default: "100" }, rounds: { type: "string", default: "5" } },
});
const EXECS = Number(args.execs);
const ROUNDS = Number(args.rounds);
const cluster = testCluster();
if (!cluster?.local) {
  console.error("needs the local cluster: set KRT_CLUSTER_DIR and KUBECONFIG");
  process.exit(2);
}
const client = cluster.client;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const f = (ms: number) => ms.toFixed(2);

await installCrds(client);
const ns = await testNamespace(client, "krt-bench-sessgw");
const dir = mkdtempSync(join(tmpdir(), "krt-bench-sessgw-"));
const ctl = startController({
  namespace: ns.name,
  kubeconfig: cluster.kubeconfig,
  runtimed: "real",
  flags: [`--dataplane-subjects=system:serviceaccount:${ns.name}:gateway`],
});
const role = `krt-bench-sessgw-${ns.name}`;
let gw: Awaited<ReturnType<typeof startGatewayProcess>> | undefined;
try {
  await ctl.waitFor("scheduling and reconciling");
  await createServiceAccount(client, ns.name, "caller");
  await createGatewayRbac(client, ns.name, role);
  await grantRuns(client, ns.name, "drive", "caller", "session", ["box"]);
  await createRuntime(client, ns.name, imageRuntime("sess", "ghcr.io/kruntimes/bash", { replicas: 1 }));
  await eventually(
    "sess pod ready",
    async () => (await readyPods(client, ns.name, "sess")).length === 1,
    180_000,
  );
  const files = await gatewayFiles(client, ns.name, cluster.kubeconfig, dir, "gw.kubeconfig");
  const dataplaneToken = readFileSync(files.dataplaneTokenFile, "utf8");
  gw = await startGatewayProcess([...files.flags, "--protocols=http", "--log-level=info"], files.env);
  await client.create<Run>(path(RunResource, ns.name), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "box" },
    spec: { runtime: "sess", mode: { session: {} } },
  });
  const run = await eventually(
    "box Ready",
    async () => {
      const r = await client.get<Run>(path(RunResource, ns.name, "box"));
      return r.status?.phase === "Ready" ? r : undefined;
    },
    90_000,
  );
  const ep = run.status?.endpoint as { address: string; podUID: string; attempt: number };
  const callerToken = await saToken(client, ns.name, "caller");
  const target = { namespace: ns.name, run: "box" };
  const request = {
    target,
    command: { program: { case: "argv" as const, value: { args: ["echo", "hi"] } } },
  };
  const headers = { authorization: `Bearer ${callerToken}` };
  const direct = sessionClient({
    baseUrl: `http://${ep.address}`,
    token: dataplaneToken,
    fence: { runUid: run.metadata.uid as string, podUid: ep.podUID, attempt: ep.attempt },
    caller: "bench",
  });
  const viaConnect = createClient(
    SessionService,
    createConnectTransport({ baseUrl: `http://127.0.0.1:${gw.ports.http}`, useBinaryFormat: true }),
  );
  const viaGrpc = createClient(
    SessionService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${gw.ports.grpc}` }),
  );
  const variants = {
    "runtimed's port (direct)": (): AsyncIterable<{ event: { case?: string } }> => direct.exec(request),
    "gateway, Connect binary (HTTP/1.1)": () => viaConnect.exec(request, { headers }),
    "gateway, gRPC (h2c)": () => viaGrpc.exec(request, { headers }),
  };
  const samples: Record<string, number[]> = {};
  const roundP50: Record<string, number[]> = {};
  const once = async (call: () => AsyncIterable<{ event: { case?: string } }>) => {
    const t0 = performance.now();
    let out = false;
    for await (const ev of call()) if (ev.event.case === "exited") out = true;
    if (!out) throw new Error("no exit event");
    return performance.now() - t0;
  };
  // Warm-up: connections open, auth decisions cached.
  for (const call of Object.values(variants)) for (let i = 0; i < 20; i++) await once(call);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, call] of Object.entries(variants)) {
      const xs: number[] = [];
      for (let i = 0; i < EXECS; i++) xs.push(await once(call));
      samples[name] = [...(samples[name] ?? []), ...xs];
      roundP50[name] = [...(roundP50[name] ?? []), pct(xs, 50)];
    }
  }
  const m = machineInfo();
  const directName = "runtimed's port (direct)";
  const d50 = pct(samples[directName] as number[], 50);
  const lines = [
    `# Session exec through the gateway — 2026-12-03`,
    "",
    `Machine: ${JSON.stringify(m)}. Local cluster (pods as host processes): real controller, runtimed and bash Runtime Server; the gateway as a real process (\`bun gateway/main.ts\`, --protocols=http) with real TokenReview/SubjectAccessReview (cached after the first call). Client on the same host. Parameters: ${ROUNDS} rounds × ${EXECS} sequential \`exec echo hi\` (argv) per variant, interleaved by round; 20 warm-up calls each.`,
    "",
    "| variant | p50 ms | p95 ms | p50 per round (ms) | p50 / direct |",
    "| --- | --- | --- | --- | --- |",
    ...Object.keys(variants).map((name) => {
      const xs = samples[name] as number[];
      return `| ${name} | ${f(pct(xs, 50))} | ${f(pct(xs, 95))} | ${(roundP50[name] as number[]).map(f).join(", ")} | ${(pct(xs, 50) / d50).toFixed(2)}× |`;
    }),
    "",
    `Gateway hop (p50 gateway − p50 direct, per round): ${Object.keys(variants)
      .filter((n) => n !== directName)
      .map(
        (n) =>
          `${n}: ${(roundP50[n] as number[]).map((v, i) => f(v - ((roundP50[directName] as number[])[i] as number))).join(", ")} ms`,
      )
      .join("; ")}.`,
  ];
  console.log(lines.join("\n"));
} finally {
  gw?.kill();
  ctl.kill();
  await ns.remove();
  await deleteGatewayRbac(client, role);
}
