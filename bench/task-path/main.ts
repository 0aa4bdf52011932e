#!/usr/bin/env bun
/**
 * What the task path costs the apiserver and the machine, around one command (typically a
 * `krt bench` run): kube-apiserver's apiserver_request_duration_seconds diffed before/after (mean
 * time per request kind inside the window), CPU seconds per process group from /proc (and per
 * Run when --runs is given), and, with --profile-seconds, a CPU profile of kube-apiserver over
 * S seconds from --profile-after seconds into the command (the apiserver needs --profiling: the local cluster's
 * KRT_APISERVER_PROFILING=1), summarised with `go tool pprof -top`.
 *
 *   KUBECONFIG=… bun bench/task-path/main.ts [--scope CLUSTER_DIR] [--runs N] [--profile-seconds S] [--profile-after A] [--out DIR] -- <command…>
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeClient, loadKubeconfigFile } from "@kruntimes/kube";
import {
  cpuTicks,
  diffRequestCodes,
  diffRequestCosts,
  parseRequestCodes,
  parseRequestCosts,
  processGroup,
} from "./cost.ts";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const flags = sep >= 0 ? argv.slice(0, sep) : argv;
const command = sep >= 0 ? argv.slice(sep + 1) : [];
const flag = (name: string) => {
  const i = flags.indexOf(name);
  return i >= 0 ? flags[i + 1] : undefined;
};
if (!process.env.KUBECONFIG || command.length === 0) {
  console.error(
    "usage: KUBECONFIG=… bun bench/task-path/main.ts [--scope CLUSTER_DIR] [--runs N] [--profile-seconds S] [--profile-after A] [--out DIR] -- <command…>",
  );
  process.exit(64);
}
const runs = Number(flag("--runs") ?? 0);
const profileSeconds = Number(flag("--profile-seconds") ?? 0);
const profileAfter = Number(flag("--profile-after") ?? 0);
const out = flag("--out") ?? "/tmp";
const client = new KubeClient(loadKubeconfigFile(process.env.KUBECONFIG));
const TICK = 100; // USER_HZ on Linux

async function metrics(): Promise<string> {
  const res = await client.request<Response>("GET", "/metrics", { raw: true, timeoutMs: 30_000 });
  return res.text();
}

/**
 * CPU ticks of the processes that belong to this measurement: the cluster's own (their command
 * line, or an ancestor's, names --scope, e.g. the cluster's state directory: its control plane,
 * node agents and every pod process under them) and everything this script starts. Other
 * clusters and other people's processes on the same machine are left out.
 */
function cpuByPid(scope: string | undefined): Map<number, { group: string; ticks: number }> {
  const info = new Map<number, { ppid: number; cmd: string; stat: string }>();
  for (const d of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      info.set(Number(d), {
        ppid,
        cmd: readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " "),
        stat,
      });
    } catch {
      // exited meanwhile
    }
  }
  const ours = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      const x = info.get(p);
      if (!x) return false;
      if (p === process.pid || (scope && x.cmd.includes(scope))) return true;
      p = x.ppid;
    }
    return false;
  };
  const m = new Map<number, { group: string; ticks: number }>();
  for (const [pid, x] of info) {
    const group = processGroup(x.cmd);
    if (group && ours(pid)) m.set(pid, { group, ticks: cpuTicks(x.stat) });
  }
  return m;
}

const text0 = await metrics();
const before = parseRequestCosts(text0);
const codes0 = parseRequestCodes(text0);
const scope = flag("--scope");
const cpu0 = cpuByPid(scope);
const load0 = readFileSync("/proc/loadavg", "utf8").trim();
const t0 = performance.now();
let profile: Promise<void> | undefined;
if (profileSeconds > 0) {
  const file = join(out, `kube-apiserver-cpu-${Date.now()}.pprof`);
  profile = Bun.sleep(profileAfter * 1000)
    .then(() =>
      client.request<Response>("GET", `/debug/pprof/profile?seconds=${profileSeconds}`, {
        raw: true,
        timeoutMs: (profileSeconds + 60) * 1000,
      }),
    )
    .then(async (res) => {
      if (!res.ok) throw new Error(`pprof: HTTP ${res.status} (is the apiserver started with --profiling?)`);
      writeFileSync(file, new Uint8Array(await res.arrayBuffer()));
      console.error(`apiserver CPU profile: ${file}`);
      const top = Bun.spawnSync(["go", "tool", "pprof", "-top", "-nodecount=35", file]);
      writeFileSync(`${file}.top.txt`, top.stdout);
      console.error(`summary: ${file}.top.txt`);
    });
}
const child = Bun.spawn(command, { stdio: ["inherit", "inherit", "inherit"] });
// Sampled every second, so a process that ends inside the window (the controller, krt, pods
// deleted at the end) counts up to its last sample; one that started inside it counts from zero.
const cpu1 = new Map<number, { group: string; ticks: number }>();
const sample = () => {
  for (const [pid, p] of cpuByPid(scope)) cpu1.set(pid, p);
};
const sampler = setInterval(sample, 1000);
const code = await child.exited;
clearInterval(sampler);
sample();
const seconds = (performance.now() - t0) / 1000;
const text1 = await metrics();
const after = parseRequestCosts(text1);
const codes = diffRequestCodes(codes0, parseRequestCodes(text1));
await profile?.catch((e: unknown) => console.error(String(e)));

const groups = new Map<string, number>();
for (const [pid, p] of cpu1) {
  const start = cpu0.get(pid)?.ticks ?? 0;
  groups.set(p.group, (groups.get(p.group) ?? 0) + (p.ticks - start) / TICK);
}
const lines: string[] = [
  `window: ${seconds.toFixed(1)} s, command exited ${code}; load average ${load0} before, ${readFileSync("/proc/loadavg", "utf8").trim()} after`,
  "",
  "| request (apiserver_request_duration_seconds, window) | count | mean ms | total s |",
  "|---|---|---|---|",
  ...diffRequestCosts(before, after)
    .slice(0, 25)
    .map((r) => `| ${r.key} | ${r.count} | ${r.meanMs.toFixed(1)} | ${r.seconds.toFixed(2)} |`),
  "",
  `| request and response code (apiserver_request_total, window) | count |${runs ? " per Run |" : ""}`,
  `|---|---|${runs ? "---|" : ""}`,
  ...codes.slice(0, 25).map(([k, n]) => `| ${k} | ${n} |${runs ? ` ${(n / runs).toFixed(2)} |` : ""}`),
  "",
  `| process group | CPU s in the window | share of the window (2 cores = 200%) |${runs ? " CPU ms per Run |" : ""}`,
  `|---|---|---|${runs ? "---|" : ""}`,
  ...[...groups]
    .sort((a, b) => b[1] - a[1])
    .map(
      ([g, s]) =>
        `| ${g} | ${s.toFixed(2)} | ${((100 * s) / seconds).toFixed(0)}% |${runs ? ` ${((1000 * s) / runs).toFixed(1)} |` : ""}`,
    ),
];
console.log(lines.join("\n"));
process.exit(code);
