/**
 * What Close needs to prove every process of a session is gone: the live (not zombie) members
 * of a process group, read from /proc, and a kill loop that waits until none is left. Zombies do
 * not count: an orphan reparented to a PID 1 that does not reap (the server itself, when it is
 * the container's first process) stays a zombie but runs nothing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { signalGroup } from "../process-group.ts";

/** Pids of the group's members that are not zombies. */
export function liveMembers(pgid: number): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return pids;
  }
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) pids.push(Number(entry));
  }
  return pids;
}

/** SIGKILLs the groups until no live member is left, or `timeoutMs` passed; returns the survivors. */
export async function killGroups(pgids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = [...pgids];
  for (;;) {
    for (const pgid of left) signalGroup(pgid, "SIGKILL");
    left = left.filter((pgid) => liveMembers(pgid).length > 0);
    if (left.length === 0 || Date.now() > deadline) return left;
    await Bun.sleep(10);
  }
}
