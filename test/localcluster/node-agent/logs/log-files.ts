/**
 * Where container logs live, like /var/log/pods: `<stateDir>/pods/<ns>_<pod>_<uid>/logs/<container>/<restartCount>.log`,
 * one file per attempt. Lookups read the directory, so logs of pods this agent instance never ran
 * (it restarted since) are still served.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The pod's directories for `namespace/name`, newest first (a name can be reused by new pods). */
export function podDirsByName(stateDir: string, namespace: string, name: string): string[] {
  const root = join(stateDir, "pods");
  if (!existsSync(root)) return [];
  const prefix = `${namespace}_${name}_`;
  return readdirSync(root)
    .filter((d) => d.startsWith(prefix) && !d.slice(prefix.length).includes("_"))
    .map((d) => join(root, d))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
}

/** The container's attempt log files, oldest attempt first. */
export function attemptLogs(podDir: string, container: string): string[] {
  const dir = join(podDir, "logs", container);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^[0-9]+\.log$/.test(f))
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))
    .map((f) => join(dir, f));
}
