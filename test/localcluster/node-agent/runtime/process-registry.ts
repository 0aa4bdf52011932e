/**
 * Remembers every container process group in `<stateDir>/processes/`, so an agent that starts
 * after a crash can kill what the previous instance left (pdeathsig kills the group leaders, but
 * not grandchildren a container forked). A group is identified by its leader's pid and start
 * time (from /proc), so a reused pid is never killed by mistake.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface ProcStat {
  pid: number;
  /** One letter: R, S, D, Z (zombie), … */
  state: string;
  pgrp: number;
  startTicks: number;
}

export function readProcStat(pid: number): ProcStat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses; fields resume after the last ")".
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { pid, state: f[0] ?? "", pgrp: Number(f[2]), startTicks: Number(f[19]) };
  } catch {
    return undefined;
  }
}

function allProcesses(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st) out.push(st);
  }
  return out;
}

export interface GroupRecord {
  pgid: number;
  startTicks: number;
  pod: string;
  container: string;
}

export class ProcessRegistry {
  private readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "processes");
    mkdirSync(this.dir, { recursive: true });
  }

  record(pgid: number, pod: string, container: string): void {
    const st = readProcStat(pgid);
    const rec: GroupRecord = { pgid, startTicks: st?.startTicks ?? 0, pod, container };
    writeFileSync(join(this.dir, String(pgid)), JSON.stringify(rec));
  }

  forget(pgid: number): void {
    rmSync(join(this.dir, String(pgid)), { force: true });
  }

  /** Kills (SIGKILL) the members of every recorded group; returns the records that still had members. */
  killLeftovers(): GroupRecord[] {
    const records: GroupRecord[] = [];
    for (const f of readdirSync(this.dir)) {
      try {
        records.push(JSON.parse(readFileSync(join(this.dir, f), "utf8")) as GroupRecord);
      } catch {
        // A half-written record of a crash: nothing to match it against.
      }
      rmSync(join(this.dir, f), { force: true });
    }
    if (records.length === 0) return [];
    const procs = allProcesses();
    const hit: GroupRecord[] = [];
    for (const r of records) {
      const leader = procs.find((p) => p.pid === r.pgid);
      const sameLeader = leader !== undefined && leader.startTicks === r.startTicks;
      const members = procs.filter(
        (p) =>
          p.pgrp === r.pgid &&
          p.state !== "Z" &&
          (sameLeader || (leader === undefined && p.startTicks >= r.startTicks)),
      );
      for (const m of members) {
        try {
          process.kill(m.pid, "SIGKILL");
        } catch {
          // exited meanwhile
        }
      }
      if (members.length) hit.push(r);
    }
    return hit;
  }
}

/** Sends `sig` to a whole process group; false when the group is gone. */
export function signalGroup(pgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * True while a live process of the group exists (members may outlive the leader). Zombies do not
 * count: orphans are reparented to PID 1, which on some hosts reaps them late.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return allProcesses().some((p) => p.pgrp === pgid && p.state !== "Z");
}
