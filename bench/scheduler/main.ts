#!/usr/bin/env bun
/**
 * Scheduler micro-benchmark (in-process, no apiserver): decisions per second and memory with
 * many Pending Runs and Runtime Pods. The scheduler is the production one (cache, queue,
 * plugins, bind tracker); the binder is in-memory and feeds each bind back as the informer
 * event, so confirmation and accounting are exercised too.
 *
 * The plain and the affinity scenarios run in one process, side by side.
 *
 *   bun bench/scheduler/main.ts [--runs 10000] [--pods 500] [--repeat 5] [--out bench/results] [--name scheduler]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { renderMarkdown } from "./report.ts";
import { runScenarios } from "./scenarios.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "10000" },
    pods: { type: "string", default: "500" },
    repeat: { type: "string", default: "5" },
    out: { type: "string" },
    /** Base name of the result files: <name>-<date>.{json,md}. */
    name: { type: "string", default: "scheduler" },
  },
});

const params = { runs: Number(values.runs), pods: Number(values.pods), repeat: Number(values.repeat) };
const loadBefore = loadavg()[0] ?? 0;
const results = await runScenarios(params);
const report = {
  name: values.name as string,
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    bun: Bun.version,
    platform: `${process.platform}-${process.arch}`,
    /** 1-minute load average before and after the run: other work on the machine skews wall time. */
    loadAverage: `${loadBefore.toFixed(2)} → ${(loadavg()[0] ?? 0).toFixed(2)}`,
  },
  params,
  results,
};
console.log(JSON.stringify(report, null, 2));
if (values.out) {
  mkdirSync(values.out, { recursive: true });
  const base = join(values.out, `${report.name}-${report.date.slice(0, 10)}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, renderMarkdown(report));
  console.error(`wrote ${base}.json and ${base}.md`);
}
