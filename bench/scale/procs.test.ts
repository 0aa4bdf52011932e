import { describe, expect, test } from "bun:test";
import { CpuAccount, groupOf, machineCpu, NOT_OURS, type ProcInfo, parseStat, REAPED } from "./procs.ts";

const proc = (pid: number, ppid: number, cmd: string, ticks: number, rssBytes = 0): ProcInfo => ({
  pid,
  ppid,
  cmd,
  ticks,
  rssBytes,
});

describe("scale procs", () => {
  test("parseStat: ppid, utime + stime, RSS pages → bytes, with a command holding spaces and parentheses", () => {
    const stat = "42 (bun (x) y) S 7 42 42 0 -1 4194304 100 0 0 0 250 50 7 3 20 0 8 0 100 12345678 300 0";
    expect(parseStat(stat)).toEqual({ ppid: 7, ticks: 300, childTicks: 10, rssBytes: 300 * 4096 });
  });

  test("machineCpu: busy excludes idle and iowait", () => {
    const s = machineCpu("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n");
    expect(s).toEqual({ busySeconds: 1.5, totalSeconds: 10 });
  });

  test("groups: only descendants of a root, by task-path's groups, else supervisor/other", () => {
    const procs = [
      proc(1, 0, "init", 0),
      proc(10, 1, "bun /w/test/localcluster/main.ts run", 0),
      proc(11, 10, "/c/bin/kubernetes-v1.37.2/kube-apiserver --x", 0),
      proc(12, 10, "bun /w/test/localcluster/node-agent/main.ts", 0),
      proc(13, 12, "bun /w/runtimed/main.ts", 0),
      proc(14, 12, "bun /w/runtimes/server/main.ts", 0),
      proc(15, 14, "bash -c echo", 0),
      proc(20, 1, "bun controller/main.ts --namespace=x", 0),
      proc(30, 1, "bun bench/scale/main.ts", 0),
      proc(99, 1, "/c/bin/kubernetes-v1.37.2/kube-apiserver (someone else's)", 0),
    ];
    const byPid = new Map(procs.map((p) => [p.pid, p]));
    const roots = new Map([
      [10, "local cluster supervisor"],
      [20, "kruntimes controller"],
      [30, "scale bench (client)"],
    ]);
    const g = (pid: number) => groupOf(byPid.get(pid) as ProcInfo, byPid, roots);
    expect([10, 11, 12, 13, 14, 15, 20, 30, 99, 1].map(g)).toEqual([
      "local cluster supervisor",
      "kube-apiserver",
      "node agents",
      "runtimed",
      "Runtime Server",
      "other (Run scripts, tools)",
      "kruntimes controller",
      "scale bench (client)",
      undefined,
      undefined,
    ]);
  });

  test("CpuAccount: seconds since creation per group; new processes from zero; a reused pid from zero; reaped children; others; RSS now", () => {
    const roots = new Map([[10, "local cluster supervisor"]]);
    const acc = new CpuAccount(
      [
        proc(10, 1, "bun test/localcluster/main.ts run", 500, 1000),
        { ...proc(11, 10, "/x/kube-apiserver", 1000, 2000), childTicks: 30 },
        proc(50, 1, "go build", 100, 10),
      ],
      roots,
    );
    acc.update([
      proc(10, 1, "bun test/localcluster/main.ts run", 510, 1000),
      { ...proc(11, 10, "/x/kube-apiserver", 1250, 3000), childTicks: 80 },
      proc(12, 10, "/x/etcd --name=a", 40, 500),
      proc(50, 1, "go build", 300, 10),
    ]);
    expect(acc.seconds()).toEqual({
      "local cluster supervisor": 0.1,
      "kube-apiserver": 2.5,
      etcd: 0.4,
      [REAPED]: 0.5,
      [NOT_OURS]: 2,
    });
    expect(acc.rssBytes()).toEqual({ "local cluster supervisor": 1000, "kube-apiserver": 3000, etcd: 500 });
    // pid 11 ended (counts to its last scan); pid 10 reused by a new process with fewer ticks
    acc.update([proc(10, 1, "bun test/localcluster/main.ts run", 7, 1000)]);
    expect(acc.seconds()["kube-apiserver"]).toBe(2.5);
    expect(acc.seconds()["local cluster supervisor"]).toBe(0.07);
  });
});
