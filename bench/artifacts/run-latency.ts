#!/usr/bin/env bun
/**
 * What artifacts add to a Run's latency, on the local cluster with the real runtimed: sequential
 * no-op Runs on a Runtime without an artifact store (the hot path before this feature), no-op
 * Runs on a Runtime with an S3 store (the hot path after it: one mkdir and one readdir, no extra
 * write), and Runs that store one small file (finalizer apply + upload + refs in the terminal
 * write). Times come from `status.timing` (microseconds): created → reported, and the part after
 * the process exited (finished → reported), where the artifact step sits.
 *
 *   KUBECONFIG=… KRT_CLUSTER_DIR=… bun bench/artifacts/run-latency.ts [--runs 30] [--record bench/results]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Run, RunResource, type Runtime } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import { startS3Server } from "../../test/localcluster/s3-server.ts";
import { eventually, testCluster, testNamespace } from "../../test/support/cluster.ts";
import { machineInfo } from "../hotpath/machine.ts";

const { values: a } = parseArgs({
  options: { runs: { type: "string", default: "30" }, record: { type: "string" } },
});
const N = Number(a.runs);
const cluster = testCluster();
if (!cluster?.local) {
  console.error(
    "needs the local cluster: set KUBECONFIG and KRT_CLUSTER_DIR (see docs/local-cluster-node-agent.md)",
  );
  process.exit(2);
}
const client = cluster.client;
const s3 = await startS3Server({ buckets: ["bench"] });
await installCrds(client);
const ns = await testNamespace(client, "krt-bench-artifacts");
await client.create(path(R.secrets, ns.name), {
  metadata: { name: "s3" },
  stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
});
const ctl = startController({ namespace: ns.name, kubeconfig: cluster.kubeconfig, runtimed: "real" });
const runtime = (name: string, store: boolean): Runtime =>
  ({
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Runtime",
    metadata: { name },
    spec: {
      replicas: 1,
      capacity: { runs: 8 },
      template: {
        spec: {
          containers: [
            {
              name: "runtime",
              image: "ghcr.io/kruntimes/bash",
              env: [{ name: "HOME", value: "/workspace" }],
            },
          ],
        },
      },
      ...(store
        ? {
            artifactStore: {
              s3: {
                bucket: "bench",
                endpoint: s3.endpoint,
                pathStyle: true,
                region: s3.region,
                credentialsSecretRef: { name: "s3" },
              },
            },
          }
        : {}),
    },
  }) as Runtime;

type Sample = { complete: number; afterExit: number };
const results: Record<string, Sample[]> = {};
try {
  await ctl.waitFor("scheduling and reconciling");
  await createRuntime(client, ns.name, runtime("plain", false));
  await createRuntime(client, ns.name, runtime("stored", true));
  for (const rt of ["plain", "stored"])
    await eventually(`${rt} ready`, async () => (await readyPods(client, ns.name, rt)).length === 1, 60_000);
  const scenarios: [string, string, string][] = [
    ["no store, no artifact", "plain", "true"],
    ["S3 store, no artifact", "stored", "true"],
    ["S3 store, one small artifact", "stored", 'echo hi > "$KRUNTIME_ARTIFACTS_DIR/a.txt"'],
  ];
  let i = 0;
  // Interleaved rounds, so drift in machine load hits every scenario alike.
  for (let round = 0; round < N + 2; round++) {
    for (const [label, rt, inline] of scenarios) {
      const name = `b${i++}`;
      await client.create<Run>(path(RunResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Run",
        metadata: { name, annotations: { "kruntimes.io/created-micros": String(Date.now() * 1000) } },
        spec: { runtime: rt, mode: { task: {} }, source: { inline } },
      });
      const r = await eventually(`${name} done`, async () => {
        const x = await client.get<Run>(path(RunResource, ns.name, name));
        return x.status?.timing?.reportedMicros ? x : undefined;
      });
      if (r.status?.phase !== "Succeeded")
        throw new Error(`${name}: ${r.status?.phase} ${r.status?.message}`);
      const t = r.status.timing ?? {};
      if (round < 2) continue; // warm-up
      const list = results[label] ?? [];
      results[label] = list;
      list.push({
        complete: ((t.reportedMicros ?? 0) - (t.createdMicros ?? 0)) / 1000,
        afterExit: ((t.reportedMicros ?? 0) - (t.finishedMicros ?? 0)) / 1000,
      });
    }
  }
} finally {
  const runs = await client.list<Run>(path(RunResource, ns.name));
  for (const r of runs.items)
    await client.delete(path(RunResource, ns.name, r.metadata.name)).catch(() => {});
  await eventually(
    "runs cleaned",
    async () => (await client.list<Run>(path(RunResource, ns.name))).items.length === 0,
    60_000,
  ).catch(() => {});
  ctl.kill();
  await ctl.exited;
  await ns.remove();
  await s3.close();
}

const q = (xs: number[], p: number) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))] as number;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const rows = Object.entries(results).map(([label, s]) => {
  const c = s.map((x) => x.complete);
  const e = s.map((x) => x.afterExit);
  return {
    label,
    n: s.length,
    completeP50: q(c, 0.5),
    completeP95: q(c, 0.95),
    completeMean: mean(c),
    afterExitP50: q(e, 0.5),
    afterExitP95: q(e, 0.95),
    afterExitMean: mean(e),
  };
});
const md = [
  `# Artifact latency on the Run path, ${new Date().toISOString().slice(0, 10)}`,
  "",
  `Measured by \`bun bench/artifacts/run-latency.ts --runs ${N}\` on the local cluster (real runtimed and bash Runtime Server, one pod per Runtime, the S3 test server on loopback); Runs one at a time, scenarios interleaved, 2 warm-up rounds dropped. \`complete\` = created → terminal status written; \`after exit\` = process exit → terminal status written (where the artifact step runs).`,
  "",
  `Machine: ${JSON.stringify(machineInfo())}`,
  "",
  "| scenario | n | complete p50 ms | p95 | mean | after exit p50 ms | p95 | mean |",
  "|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.n} | ${r.completeP50.toFixed(1)} | ${r.completeP95.toFixed(1)} | ${r.completeMean.toFixed(1)} | ${r.afterExitP50.toFixed(2)} | ${r.afterExitP95.toFixed(2)} | ${r.afterExitMean.toFixed(2)} |`,
  ),
  "",
].join("\n");
console.log(md);
if (a.record) {
  const base = join(a.record, `artifacts-latency-${new Date().toISOString().slice(0, 10)}`);
  writeFileSync(`${base}.md`, md);
  writeFileSync(
    `${base}.json`,
    JSON.stringify({ runs: N, machine: machineInfo(), rows, raw: results }, null, 2),
  );
}
