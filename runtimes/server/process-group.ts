/** Signals to a Run's process group (its main process is the group leader, pgid = pid). */
import { constants } from "node:os";

/** Sends `signal` to the group; false when no process of the group is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/** True while any process of the group exists. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const names = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/** Signal name as the contract reports it ("SIGKILL"), from Bun's name or number. */
export function signalName(signal: string | number | null): string {
  if (signal === null) return "";
  if (typeof signal === "string") return signal;
  return names.get(signal) ?? `SIG${signal}`;
}
