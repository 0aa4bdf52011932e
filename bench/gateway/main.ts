#!/usr/bin/env bun
/**
 * bun bench/gateway/main.ts [--duration-ms=3000] [--warmup-ms=500] [--concurrency=1,16,64] [--json=out.json]
 * Runs the stand-in gateway benchmark (see bench.ts) and prints a markdown table.
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { benchStandin, table } from "./bench.ts";

const arg = (name: string, def: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;
const o = {
  durationMs: Number(arg("duration-ms", "3000")),
  warmupMs: Number(arg("warmup-ms", "500")),
  concurrency: arg("concurrency", "1,16,64").split(",").map(Number),
};
console.log(
  `# gateway benchmark (stand-in dataplane), ${cpus().length} cores, Bun ${Bun.version}, ${JSON.stringify(o)}\n`,
);
const rows = await benchStandin(o);
console.log(table(rows));
const json = arg("json", "");
if (json) writeFileSync(json, JSON.stringify({ options: o, rows }, null, 2));
