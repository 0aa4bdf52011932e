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
import { createRuntime, readyPods } from "../../controller/testing/cluster/objects.ts";
import { eventually } from "../../test/support/cluster.ts";
import { machineInfo } from "../hotpath/machine.ts";
import { bashRuntime, quantile as q, startArtifactBench } from "./cluster-bench.ts";

const { N, client, ns, ctl, s3Store, runToEnd, teardown, report } = await startArtifactBench(
  "krt-bench-artifacts",
  "30",
);
const runtime = (name: string, store: boolean) => bashRuntime(name, store ? { s3: s3Store } : undefined);

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
      const r = await runToEnd(name, { runtime: rt, mode: { task: {} }, source: { inline } });
      const t = r.status?.timing ?? {};
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
  await teardown();
}

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
report("artifacts-latency", md, rows, results);
