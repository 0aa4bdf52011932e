#!/usr/bin/env bun
/**
 * The gateway benchmark.
 *
 * On the local cluster (real controller, runtimed, Runtime Server; python and bash function Runs;
 * a real gateway process):
 *   KRT_CLUSTER_DIR=/tmp/krt-x KUBECONFIG=/tmp/krt-x/admin.kubeconfig bun bench/gateway/main.ts \
 *     [--duration-ms=3000] [--warmup-ms=500] [--concurrency=1,16,64] [--rounds=2] [--workers=4] \
 *     [--langs=python,bash] [--out=bench/results/gateway-<date>]
 * writes <out>.json and <out>.md (every round's rows, then the medians over rounds).
 *
 * `--target=standin`: the gateway against an in-process stand-in apiserver and dataplane (no
 * cluster; Elysia vs plain Bun.serve surface) — prints a markdown table.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testCluster } from "../../test/support/cluster.ts";
import { machineInfo } from "../hotpath/machine.ts";
import { benchStandin, table } from "./bench.ts";
import { benchCluster, type Lang, medians } from "./cluster.ts";
import { renderClusterReport } from "./report.ts";

const arg = (name: string, def: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const o = {
  durationMs: Number(arg("duration-ms", "3000")),
  warmupMs: Number(arg("warmup-ms", "500")),
  concurrency: arg("concurrency", "1,16,64").split(",").map(Number),
};

if (arg("target", "cluster") === "standin") {
  console.log(`# gateway benchmark (stand-in dataplane), Bun ${Bun.version}, ${JSON.stringify(o)}\n`);
  const rows = await benchStandin(o);
  console.log(table(rows));
  const json = arg("json", "");
  if (json) writeFileSync(json, JSON.stringify({ options: o, rows }, null, 2));
  process.exit(0);
}

const cluster = testCluster();
if (!cluster?.local) {
  console.error("needs the local cluster: set KRT_CLUSTER_DIR and KUBECONFIG (see the module comment)");
  process.exit(2);
}
const loadBefore = machineInfo().loadAverage;
const started = new Date().toISOString();
const options = {
  ...o,
  rounds: Number(arg("rounds", "2")),
  workers: Number(arg("workers", "4")),
  langs: arg("langs", "python,bash").split(",") as Lang[],
};
const rows = await benchCluster({ ...options, kubeconfig: cluster.kubeconfig, client: cluster.client });
const meta = {
  date: started,
  machine: machineInfo(),
  loadAverageBefore: loadBefore,
  options,
  body: '{"hello":"world","n":42} (24 bytes, application/json)',
};
const out = arg("out", join(import.meta.dir, "..", "results", `gateway-${started.slice(0, 10)}`));
writeFileSync(`${out}.json`, `${JSON.stringify({ ...meta, rows }, null, 2)}\n`);
writeFileSync(`${out}.md`, renderClusterReport(meta, medians(rows)));
console.log(`wrote ${out}.json and ${out}.md`);
process.exit(0);
