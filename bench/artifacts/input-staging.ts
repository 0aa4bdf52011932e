#!/usr/bin/env bun
/**
 * What `spec.artifactInputs` adds before a task starts, on the local cluster with the real
 * runtimed and the S3 test server: sequential Runs with no input (the baseline), one small file, a
 * 10 MiB file, and a directory of 100 files (1 MiB, stored as an archive), scenarios interleaved.
 * Per Run: created → started from `status.timing` (microseconds), and runtimed's own
 * `artifact inputs staged` record (`ms` in all, `apiMs` reading the source Run).
 *
 *   KUBECONFIG=… KRT_CLUSTER_DIR=… bun bench/artifacts/input-staging.ts [--runs 20] [--record bench/results]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type ArtifactInput, type Run, RunResource, type Runtime } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import { startS3Server } from "../../test/localcluster/s3-server.ts";
import { runtimedLog } from "../../test/support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../../test/support/cluster.ts";
import { machineInfo } from "../hotpath/machine.ts";

const { values: a } = parseArgs({
  options: { runs: { type: "string", default: "20" }, record: { type: "string" } },
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
const ns = await testNamespace(client, "krt-bench-inputs");
await client.create(path(R.secrets, ns.name), {
  metadata: { name: "s3" },
  stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
});
const ctl = startController({ namespace: ns.name, kubeconfig: cluster.kubeconfig, runtimed: "real" });
const runtime: Runtime = {
  apiVersion: "kruntimes.io/v1alpha1",
  kind: "Runtime",
  metadata: { name: "bash" },
  spec: {
    replicas: 1,
    capacity: { runs: 8 },
    template: {
      spec: {
        containers: [
          { name: "runtime", image: "ghcr.io/kruntimes/bash", env: [{ name: "HOME", value: "/workspace" }] },
        ],
      },
    },
    artifactStore: {
      s3: {
        bucket: "bench",
        endpoint: s3.endpoint,
        pathStyle: true,
        region: s3.region,
        credentialsSecretRef: { name: "s3" },
      },
      maxArtifactBytes: 32 * 1024 * 1024,
    },
  },
} as Runtime;

let i = 0;
async function runToEnd(inline: string, artifactInputs?: ArtifactInput[], name = `b${i++}`): Promise<Run> {
  await client.create<Run>(path(RunResource, ns.name), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name, annotations: { "kruntimes.io/created-micros": String(Date.now() * 1000) } },
    spec: {
      runtime: "bash",
      mode: { task: {} },
      source: { inline },
      ...(artifactInputs ? { artifactInputs } : {}),
    },
  });
  const r = await eventually(
    `${name} done`,
    async () => {
      const x = await client.get<Run>(path(RunResource, ns.name, name));
      return x.status?.timing?.reportedMicros ? x : undefined;
    },
    60_000,
  );
  if (r.status?.phase !== "Succeeded") throw new Error(`${name}: ${r.status?.phase} ${r.status?.message}`);
  return r;
}

type Sample = { name: string; createdToStarted: number; ms?: number; apiMs?: number; bytes?: number };
const results: Record<string, Sample[]> = {};
try {
  await ctl.waitFor("scheduling and reconciling");
  await createRuntime(client, ns.name, runtime);
  await eventually("bash ready", async () => (await readyPods(client, ns.name, "bash")).length === 1, 60_000);
  const pod = (await readyPods(client, ns.name, "bash"))[0]?.metadata.name as string;
  await runToEnd(
    [
      'd="$KRUNTIME_ARTIFACTS_DIR"',
      'echo "a small file" > "$d/small.txt"',
      'head -c 10485760 /dev/urandom > "$d/big.bin"',
      'mkdir "$d/tree" && for n in $(seq 100); do head -c 10485 /dev/urandom > "$d/tree/f$n"; done',
    ].join("\n"),
    undefined,
    "src",
  );
  const scenarios: [string, ArtifactInput[] | undefined][] = [
    ["no input", undefined],
    ["one small file", [{ run: "src", name: "small.txt" }]],
    ["a 10 MiB file", [{ run: "src", name: "big.bin" }]],
    ["a directory (100 files, 1 MiB)", [{ run: "src", name: "tree" }]],
  ];
  // Interleaved rounds, so drift in machine load hits every scenario alike.
  for (let round = 0; round < N + 2; round++) {
    for (const [label, inputs] of scenarios) {
      const r = await runToEnd("true", inputs);
      if (round < 2) continue; // warm-up
      const t = r.status?.timing ?? {};
      const list = results[label] ?? [];
      results[label] = list;
      list.push({
        name: r.metadata.name as string,
        createdToStarted: ((t.startedMicros ?? 0) - (t.createdMicros ?? 0)) / 1000,
      });
    }
  }
  const records = new Map<string, { ms: number; apiMs: number; bytes: number }>();
  for (const line of (await runtimedLog(client, ns.name, pod)).split("\n"))
    if (line.includes('"artifact inputs staged"')) {
      const x = JSON.parse(line);
      records.set(x.run, x);
    }
  for (const list of Object.values(results))
    for (const s of list) Object.assign(s, records.get(s.name) ?? {});
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
const f = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "—" : x.toFixed(1));
const rows = Object.entries(results).map(([label, s]) => {
  const staged = s.filter((x) => x.ms !== undefined);
  return {
    label,
    n: s.length,
    bytes: staged[0]?.bytes,
    startP50: q(
      s.map((x) => x.createdToStarted),
      0.5,
    ),
    startP95: q(
      s.map((x) => x.createdToStarted),
      0.95,
    ),
    stageP50: staged.length
      ? q(
          staged.map((x) => x.ms as number),
          0.5,
        )
      : undefined,
    stageP95: staged.length
      ? q(
          staged.map((x) => x.ms as number),
          0.95,
        )
      : undefined,
    apiP50: staged.length
      ? q(
          staged.map((x) => x.apiMs as number),
          0.5,
        )
      : undefined,
  };
});
const md = [
  `# Artifact input staging, ${new Date().toISOString().slice(0, 10)}`,
  "",
  `Measured by \`bun bench/artifacts/input-staging.ts --runs ${N}\` on the local cluster (real runtimed and bash Runtime Server, one pod, the S3 test server on loopback); Runs one at a time, scenarios interleaved, 2 warm-up rounds dropped. \`created → started\` from \`status.timing\`; \`staging\` and \`API\` from runtimed's \`artifact inputs staged\` record (\`ms\`, \`apiMs\`: reading the source Run); \`bytes\` as stored (the directory compressed — random data, so about its size).`,
  "",
  `Machine: ${JSON.stringify(machineInfo())}`,
  "",
  "| scenario | n | bytes | created → started p50 ms | p95 | staging p50 ms | p95 | of it API p50 ms |",
  "|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.n} | ${r.bytes ?? "—"} | ${f(r.startP50)} | ${f(r.startP95)} | ${f(r.stageP50)} | ${f(r.stageP95)} | ${f(r.apiP50)} |`,
  ),
  "",
].join("\n");
console.log(md);
if (a.record) {
  const base = join(a.record, `artifact-inputs-${new Date().toISOString().slice(0, 10)}`);
  writeFileSync(`${base}.md`, md);
  writeFileSync(
    `${base}.json`,
    JSON.stringify({ runs: N, machine: machineInfo(), rows, raw: results }, null, 2),
  );
}
