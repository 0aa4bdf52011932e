/**
 * How long the local cluster takes to come up: starts and stops a private cluster (its own state
 * directory, never yours) `--rounds` times and prints each round's `startSeconds` (the
 * supervisor's own measure, from cluster.json) and the wall time of `up`, then min/median/max.
 * The cluster tests only check that it comes up and leaves nothing behind; the speed is here.
 * Needs the control-plane binaries built (`bash test/localcluster/build/build-binaries.sh`).
 * Usage: bun bench/localcluster/startup.ts [--rounds 5]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dir, "../..");
const MAIN = join(ROOT, "test/localcluster/main.ts");
const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("error: --rounds must be a positive integer");
  process.exit(64);
}

function cluster(dir: string, action: "up" | "down"): void {
  const p = Bun.spawnSync([process.execPath, MAIN, action], {
    env: { ...process.env, KRT_CLUSTER_DIR: dir },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (p.exitCode !== 0) throw new Error(`${action} failed (${p.exitCode}): ${p.stderr.toString()}`);
}

const rows: { startSeconds: number; upMs: number }[] = [];
for (let i = 0; i < rounds; i++) {
  const dir = mkdtempSync("/tmp/krt-bench-startup-");
  try {
    const t0 = performance.now();
    cluster(dir, "up");
    const upMs = performance.now() - t0;
    const info = JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8")) as { startSeconds: number };
    rows.push({ startSeconds: info.startSeconds, upMs });
    console.log(`round ${i + 1}: startSeconds ${info.startSeconds}, up took ${(upMs / 1000).toFixed(1)} s`);
  } finally {
    try {
      cluster(dir, "down");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]?.toFixed(1)}, median ${s[Math.floor(s.length / 2)]?.toFixed(1)}, max ${s.at(-1)?.toFixed(1)}`;
};
console.log(`startSeconds: ${summary(rows.map((r) => r.startSeconds))}`);
console.log(`up wall time (s): ${summary(rows.map((r) => r.upMs / 1000))}`);
