/**
 * One agent per state directory. Two agents on the same stateDir would kill each other's
 * containers as "leftovers" and fight over the same Node's pods, so a second one refuses to start.
 * The lock is `<stateDir>/agent.pid` with the holder's pid and start time; a stale file (holder
 * gone, or its pid reused by another process) is taken over.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readProcStat } from "./process-registry.ts";

export class InstanceLockError extends Error {
  override name = "InstanceLockError";
}

export function acquireInstanceLock(stateDir: string, pid = process.pid): void {
  mkdirSync(stateDir, { recursive: true });
  const file = join(stateDir, "agent.pid");
  try {
    const held = JSON.parse(readFileSync(file, "utf8")) as { pid: number; startTicks: number };
    const st = readProcStat(held.pid);
    if (held.pid !== pid && st && st.state !== "Z" && st.startTicks === held.startTicks) {
      throw new InstanceLockError(`another node agent (pid ${held.pid}) is running on ${stateDir}`);
    }
  } catch (e) {
    if (e instanceof InstanceLockError) throw e;
    // No lock file, or an unreadable one: nobody holds it.
  }
  writeFileSync(file, JSON.stringify({ pid, startTicks: readProcStat(pid)?.startTicks ?? 0 }));
}
