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
import type { ArtifactInput } from "@kruntimes/api";
import { createRuntime, readyPods } from "../../controller/testing/cluster/objects.ts";
import { runtimedLog } from "../../test/support/artifacts.ts";
import { eventually } from "../../test/support/cluster.ts";
import { machineInfo } from "../hotpath/machine.ts";
import { bashRuntime, quantile as q, startArtifactBench } from "./cluster-bench.ts";

const {
  N,
  client,
  ns,
  ctl,
  s3Store,
  runToEnd: run,
  teardown,
  report,
} = await startArtifactBench("krt-bench-inputs", "20");
const runtime = bashRuntime("bash", { s3: s3Store, maxArtifactBytes: 32 * 1024 * 1024 });

let i = 0;
const runToEnd = (inline: string, artifactInputs?: ArtifactInput[], name = `b${i++}`) =>
  run(
    name,
    {
      runtime: "bash",
      mode: { task: {} },
      source: { inline },
      ...(artifactInputs ? { artifactInputs } : {}),
    },
    60_000,
  );

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
  await teardown();
}

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
report("artifact-inputs", md, rows, results);
