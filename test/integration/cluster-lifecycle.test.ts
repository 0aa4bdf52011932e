/**
 * The harness leaves no process behind: neither after an orderly `down` nor when the supervisor
 * is killed outright (as when a test run crashes). Starts a second, private local cluster.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const repoRoot = resolve(import.meta.dir, "../..");
const main = join(repoRoot, "test/localcluster/main.ts");
// Needs the locally built binaries; skipped when the suite runs against a foreign KUBECONFIG only.
const suite = process.env.KRT_CLUSTER_DIR ? describe : describe.skip;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function startCluster(dir: string): Promise<{ supervisor: number; pids: number[] }> {
  const env = { ...process.env, KRT_CLUSTER_DIR: dir };
  const up = Bun.spawnSync([process.execPath, main, "up"], { env, stdout: "pipe", stderr: "pipe" });
  if (up.exitCode !== 0) throw new Error(`up failed: ${up.stderr.toString()}`);
  const st = Bun.spawnSync([process.execPath, main, "status"], { env, stdout: "pipe" });
  const status = JSON.parse(st.stdout.toString()) as {
    pid: number;
    components: Record<string, { pid?: number }>;
  };
  const pids = Object.values(status.components).flatMap((c) => (c.pid ? [c.pid] : []));
  return { supervisor: status.pid, pids };
}

async function allGone(pids: number[], timeoutMs = 60_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids;
  while (Date.now() < deadline) {
    left = left.filter(alive);
    if (left.length === 0) return [];
    await Bun.sleep(100);
  }
  return left;
}

suite("local cluster lifecycle", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("down stops every component", async () => {
    const dir = mkdtempSync("/tmp/krt-lifecycle-");
    dirs.push(dir);
    // How fast it comes up is measured by bench/localcluster/startup.ts, not bounded here.
    const { supervisor, pids } = await startCluster(dir);
    const info = JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8")) as { startSeconds: number };
    expect(info.startSeconds).toBeGreaterThan(0);
    expect(pids.length).toBeGreaterThanOrEqual(5);
    const down = Bun.spawnSync([process.execPath, main, "down"], {
      env: { ...process.env, KRT_CLUSTER_DIR: dir },
    });
    expect(down.exitCode).toBe(0);
    expect(await allGone([supervisor, ...pids])).toEqual([]);
    expect(processesMentioning(dir)).toEqual([]);
  }, 120_000);

  test("a killed supervisor takes every component with it", async () => {
    const dir = mkdtempSync("/tmp/krt-lifecycle-");
    dirs.push(dir);
    const { supervisor, pids } = await startCluster(dir);
    process.kill(supervisor, "SIGKILL");
    expect(await allGone([supervisor, ...pids])).toEqual([]);
    expect(processesMentioning(dir)).toEqual([]);
  }, 120_000);
});

/** Any process whose command line names the cluster's state dir (components, pods' volumes). */
function processesMentioning(dir: string): string[] {
  const p = Bun.spawnSync(["pgrep", "-af", dir], { stdout: "pipe" });
  return p.stdout
    .toString()
    .split("\n")
    .filter((l) => l.trim() && !l.includes("pgrep"));
}
