#!/usr/bin/env bun
/**
 * Runs the integration and e2e test files on several local clusters at once: one worker per
 * cluster, each taking the next file from one queue (slowest first, by the times recorded in
 * test/suite-times.json) and running it as its own `bun test` process with that cluster's
 * KUBECONFIG and KRT_CLUSTER_DIR. Most of a cluster test's time is waiting (for watches, pods,
 * processes), so two clusters on 2 cores finish well before one does. A file's output is printed
 * whole when it ends, so the logs of two files never interleave; a summary comes last.
 *
 *   bun scripts/run-suites.ts --cluster DIR [--cluster DIR…] [--timeout MS] [--record FILE] PATH…
 *
 * PATH is a test file or a directory searched for *.test.ts. Exit 1 when any file failed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Glob } from "bun";
import { runProcess } from "../test/support/process.ts";
import { countOf, failureExcerpts } from "./suite-output.ts";

const ROOT = resolve(import.meta.dir, "..");
const TIMES = join(ROOT, "test", "suite-times.json");

const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    cluster: { type: "string", multiple: true },
    timeout: { type: "string", default: "300000" },
    record: { type: "string" },
  },
});
const clusters = a.cluster ?? [];
if (clusters.length === 0 || positionals.length === 0) {
  console.error(
    "usage: bun scripts/run-suites.ts --cluster DIR [--cluster DIR…] [--timeout MS] [--record FILE] PATH…",
  );
  process.exit(64);
}

/** Test files under the given paths, as repository-relative paths. */
function testFiles(paths: string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const abs = resolve(ROOT, p);
    if (!existsSync(abs)) continue;
    if (statSync(abs).isFile()) out.add(relative(ROOT, abs));
    else
      for (const f of new Glob("**/*.test.ts").scanSync({ cwd: abs })) out.add(relative(ROOT, join(abs, f)));
  }
  return [...out].sort();
}

/** Slowest first (longest-processing-time order); files without a recorded time go first. */
function order(files: string[], seconds: Record<string, number>): string[] {
  const t = (f: string) => seconds[f] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((x, y) => t(y) - t(x) || x.localeCompare(y));
}

interface Result {
  file: string;
  worker: number;
  seconds: number;
  code: number;
  pass: number;
  fail: number;
  /** What to repeat under the summary when the file failed. */
  excerpts: string[];
}

// krt built once for every file (test/e2e/krt-binary.ts uses it), not once per test process.
const krtDir = mkdtempSync(join(tmpdir(), "krt-suites-"));
const krt = join(krtDir, "krt");
const build = Bun.spawnSync(["bash", join(ROOT, "krt", "build.sh"), krt], {
  stdout: "inherit",
  stderr: "inherit",
});
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);

const recorded: Record<string, number> = existsSync(TIMES) ? JSON.parse(readFileSync(TIMES, "utf8")) : {};
const queue = order(testFiles(positionals), recorded);
const results: Result[] = [];
const started = performance.now();

async function worker(index: number, dir: string): Promise<void> {
  const info = JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8")) as { kubeconfig: string };
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const t0 = performance.now();
    const { code, stdout, stderr } = await runProcess(
      ["bun", "test", "--timeout", a.timeout as string, `./${file}`],
      {
        cwd: ROOT,
        env: { ...process.env, KUBECONFIG: info.kubeconfig, KRT_CLUSTER_DIR: dir, KRT_E2E_KRT: krt },
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    const text = `${stdout}${stderr}`;
    const r = {
      file,
      worker: index,
      seconds,
      code,
      pass: countOf(text, "pass"),
      fail: countOf(text, "fail"),
      excerpts: code === 0 ? [] : failureExcerpts(text),
    };
    results.push(r);
    const mark = code === 0 ? "ok" : "FAILED";
    process.stdout.write(
      `\n== ${file} — ${mark}, ${r.pass} pass, ${r.fail} fail, ${seconds.toFixed(1)} s on cluster ${index + 1}\n${text}`,
    );
  }
}

await Promise.all(clusters.map((dir, i) => worker(i, dir)));
const wall = (performance.now() - started) / 1000;
rmSync(krtDir, { recursive: true, force: true });
const failed = results.filter((r) => r.code !== 0);
const sum = results.reduce((s, r) => s + r.seconds, 0);
console.log(`\n== summary: ${results.length} files on ${clusters.length} cluster(s) in ${wall.toFixed(0)} s`);
console.log(`(${sum.toFixed(0)} s of files end to end; slowest:)`);
for (const r of [...results].sort((x, y) => y.seconds - x.seconds).slice(0, 12))
  console.log(`  ${r.seconds.toFixed(1).padStart(6)} s  ${r.file}`);
const pass = results.reduce((s, r) => s + r.pass, 0);
const fail = results.reduce((s, r) => s + r.fail, 0);
console.log(`${pass} pass, ${fail} fail`);
if (a.record) {
  const times = Object.fromEntries(
    [...results].sort((x, y) => x.file.localeCompare(y.file)).map((r) => [r.file, Math.round(r.seconds)]),
  );
  writeFileSync(a.record, `${JSON.stringify(times, null, 2)}\n`);
}
if (failed.length > 0) {
  // Again below the summary: a log read from its tail shows why, not only which file.
  for (const r of failed)
    for (const e of r.excerpts) console.log(`\n== failure in ${r.file} (cluster ${r.worker + 1}):\n${e}`);
  console.log(`\nfailed: ${failed.map((r) => `${r.file} (exit ${r.code})`).join(", ")}`);
  process.exit(1);
}
