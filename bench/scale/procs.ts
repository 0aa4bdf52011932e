/**
 * CPU seconds and RSS per process group of one cluster, from /proc: every process descended from
 * a root (the local cluster's supervisor, the controller, this benchmark), grouped by
 * task-path's `processGroup` (the same groups its cost report uses). Processes of other clusters
 * and other people on the machine count as one group of their own, children our processes
 * reaped (the Runs' short-lived processes) as another. The pure part (`CpuAccount`, `parseStat`) is
 * tested; `scanProc` reads the live /proc.
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpuTicks, processGroup } from "../task-path/cost.ts";

export const TICK = 100; // USER_HZ on Linux
const PAGE = 4096;

export interface ProcInfo {
  pid: number;
  ppid: number;
  cmd: string;
  ticks: number;
  /** cutime + cstime: CPU of children it waited for (a Runtime Server's Run processes). */
  childTicks?: number;
  rssBytes: number;
}

/** The group of every process not under a root. */
export const NOT_OURS = "not this cluster (other work on the machine)";
/** CPU of exited children our processes waited for: mostly the Runs' own processes. */
export const REAPED = "reaped children (Run processes)";

/** ppid, utime + stime and cutime + cstime (ticks) and RSS (bytes) of one /proc/<pid>/stat line. */
export function parseStat(stat: string): {
  ppid: number;
  ticks: number;
  childTicks: number;
  rssBytes: number;
} {
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14) … rss(21), in pages.
  return {
    ppid: Number(rest[1]),
    ticks: cpuTicks(stat),
    childTicks: Number(rest[13]) + Number(rest[14]),
    rssBytes: Number(rest[21]) * PAGE,
  };
}

/** Busy and total CPU seconds of the machine from /proc/stat's first line (idle and iowait are not busy). */
export function machineCpu(procStat: string): { busySeconds: number; totalSeconds: number } {
  const f = (procStat.split("\n")[0] ?? "").trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busySeconds: (total - idle) / TICK, totalSeconds: total / TICK };
}

/** The group of a process under one of the roots; undefined when it is not ours. */
export function groupOf(
  p: ProcInfo,
  byPid: ReadonlyMap<number, ProcInfo>,
  roots: ReadonlyMap<number, string>,
): string | undefined {
  let root: number | undefined;
  for (let q: ProcInfo | undefined = p, hops = 0; q && hops < 64; hops++, q = byPid.get(q.ppid)) {
    if (roots.has(q.pid)) {
      root = q.pid;
      break;
    }
  }
  if (root === undefined) return undefined;
  if (p.pid === root) return processGroup(p.cmd) ?? roots.get(root);
  return (
    processGroup(p.cmd) ??
    (/localcluster\/main\.ts/.test(p.cmd) ? "local cluster supervisor" : undefined) ??
    "other (Run scripts, tools)"
  );
}

/**
 * CPU seconds per group since it was created: a process present then counts from its ticks
 * then, one started later from zero; a process that ended counts up to its last scan.
 */
export class CpuAccount {
  private readonly base = new Map<number, { ticks: number; childTicks: number }>();
  private readonly last = new Map<number, { group: string; ticks: number; childTicks: number }>();
  private rss: Record<string, number> = {};

  constructor(
    first: readonly ProcInfo[],
    private readonly roots: ReadonlyMap<number, string>,
  ) {
    for (const p of first) this.base.set(p.pid, { ticks: p.ticks, childTicks: p.childTicks ?? 0 });
    this.update(first);
  }

  update(procs: readonly ProcInfo[]): void {
    const byPid = new Map(procs.map((p) => [p.pid, p]));
    const rss: Record<string, number> = {};
    for (const p of procs) {
      const group = groupOf(p, byPid, this.roots) ?? NOT_OURS;
      // A pid reused by a new process: that one counts from zero.
      if (p.ticks < (this.base.get(p.pid)?.ticks ?? 0)) this.base.delete(p.pid);
      this.last.set(p.pid, { group, ticks: p.ticks, childTicks: p.childTicks ?? 0 });
      if (group !== NOT_OURS) rss[group] = (rss[group] ?? 0) + p.rssBytes;
    }
    this.rss = rss;
  }

  /**
   * CPU seconds per group, with the children our processes reaped as a group of their own
   * (`REAPED`) and everything else on the machine as `NOT_OURS`.
   */
  seconds(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [pid, x] of this.last) {
      const b = this.base.get(pid);
      out[x.group] = (out[x.group] ?? 0) + (x.ticks - (b?.ticks ?? 0)) / TICK;
      if (x.group !== NOT_OURS)
        out[REAPED] = (out[REAPED] ?? 0) + (x.childTicks - (b?.childTicks ?? 0)) / TICK;
    }
    return out;
  }

  rssBytes(): Record<string, number> {
    return { ...this.rss };
  }
}

/** Every process on the machine now (those that exit while read are skipped). */
export function scanProc(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const d of readdirSync("/proc")) {
    if (d.charCodeAt(0) < 48 || d.charCodeAt(0) > 57) continue;
    try {
      const s = parseStat(readFileSync(`/proc/${d}/stat`, "utf8"));
      out.push({
        pid: Number(d),
        cmd: readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " "),
        ...s,
      });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
