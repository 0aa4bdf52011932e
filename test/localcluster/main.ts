#!/usr/bin/env bun
/**
 * The local cluster (test infrastructure): a real control plane plus the local node agent.
 *   bun test/localcluster/main.ts up [--nodes N]   build binaries if needed, start in the background
 *                                          with N node agents (1–3; default $KRT_NODES or 1), print usage
 *   bun test/localcluster/main.ts down    stop everything (no process is left behind)
 *   bun test/localcluster/main.ts status  print cluster.json and component state
 *   bun test/localcluster/main.ts run     the supervisor itself, in the foreground
 * State lives in $KRT_CLUSTER_DIR (default /tmp/krt-local-cluster).
 */
import { existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { nodesFlag, parseNodeCount } from "./nodes.ts";
import type { ClusterInfo } from "./supervisor.ts";

const repoRoot = resolve(import.meta.dir, "../..");
const env = process.env;
const stateDir = resolve(env.KRT_CLUSTER_DIR ?? "/tmp/krt-local-cluster");
const nodeName = env.KRT_NODE_NAME ?? "krt-local-node";
const infoFile = join(stateDir, "cluster.json");

function readInfo(): ClusterInfo | undefined {
  if (!existsSync(infoFile)) return undefined;
  const info = JSON.parse(readFileSync(infoFile, "utf8")) as ClusterInfo;
  try {
    process.kill(info.pid, 0);
    return info;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function printUsage(info: ClusterInfo): void {
  const names = (info.nodes ?? [{ name: info.nodeName }]).map((n) => n.name).join(", ");
  console.log(`
kruntimes local cluster is up (${names}, API ${info.server}, started in ${info.startSeconds}s)

  export KUBECONFIG=${info.kubeconfig}
  kubectl get nodes

Logs: ${join(info.stateDir, "logs")}   Stop: bun run cluster:down`);
}

async function up(): Promise<void> {
  const nodeCount = parseNodeCount(nodesFlag(process.argv) ?? env.KRT_NODES);
  const existing = readInfo();
  if (existing) {
    const have = existing.nodes?.length ?? 1;
    if (have !== nodeCount)
      console.error(`note: the running cluster has ${have} node(s); bring it down first to change that`);
    return printUsage(existing);
  }
  const build = Bun.spawnSync(["bash", join(repoRoot, "test/localcluster/build/build-binaries.sh")], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if (build.exitCode !== 0) throw new Error("building the control-plane binaries failed (output above)");
  mkdirSync(join(stateDir, "logs"), { recursive: true });
  const log = openSync(join(stateDir, "logs", "supervisor.log"), "a");
  const child = Bun.spawn(["setsid", process.execPath, import.meta.path, "run"], {
    cwd: repoRoot,
    env: { ...env, KRT_CLUSTER_DIR: stateDir, KRT_NODES: String(nodeCount) },
    stdin: "ignore",
    stdout: log,
    stderr: log,
  });
  child.unref();
  const deadline = Date.now() + 120_000;
  process.stderr.write("starting local cluster ");
  while (Date.now() < deadline) {
    const info = readInfo();
    if (info) {
      process.stderr.write("\n");
      return printUsage(info);
    }
    if (child.exitCode !== null) break;
    process.stderr.write(".");
    await Bun.sleep(250);
  }
  const tail = readFileSync(join(stateDir, "logs", "supervisor.log"), "utf8")
    .split("\n")
    .slice(-15)
    .join("\n");
  throw new Error(`local cluster did not come up:\n${tail}\nsee ${join(stateDir, "logs")}`);
}

async function down(): Promise<void> {
  if (!existsSync(infoFile)) return console.log("local cluster is not running");
  const info = JSON.parse(readFileSync(infoFile, "utf8")) as ClusterInfo;
  if (alive(info.pid)) {
    try {
      process.kill(info.pid, "SIGTERM");
    } catch {}
    const deadline = Date.now() + 40_000;
    while (alive(info.pid) && Date.now() < deadline) await Bun.sleep(100);
    // Components die with the supervisor (pdeathsig); SIGKILL only if it hung.
    if (alive(info.pid)) process.kill(info.pid, "SIGKILL");
  }
  console.log("local cluster stopped");
}

async function status(): Promise<void> {
  const info = readInfo();
  if (!info) {
    console.log("local cluster is not running");
    process.exit(1);
  }
  const res = await fetch("http://localhost/status", { unix: info.controlSocket } as RequestInit);
  console.log(JSON.stringify({ ...info, components: await res.json() }, null, 2));
}

const cmd = process.argv[2];
try {
  if (cmd === "up") await up();
  else if (cmd === "down") await down();
  else if (cmd === "status") await status();
  else if (cmd === "run") {
    const { runSupervisor } = await import("./supervisor.ts");
    await runSupervisor({
      stateDir,
      repoRoot,
      nodeName,
      nodeCount: parseNodeCount(env.KRT_NODES),
      fresh: env.KRT_CLUSTER_KEEP_DATA !== "1",
      withNodeAgent: env.KRT_NODE_AGENT !== "0",
      env,
    });
  } else {
    console.error("usage: bun test/localcluster/main.ts up [--nodes 1|2|3]|down|status|run");
    process.exit(2);
  }
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
}
