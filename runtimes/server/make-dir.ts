/**
 * mkdir -p that costs one syscall per missing directory. Bun's `mkdirSync(path, {recursive})`
 * measured 0.7 ms p50 for two new levels on these machines against 0.11 ms for one plain mkdir,
 * and it is on every Run's critical path (working and state directories).
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

export function makeDir(path: string): void {
  try {
    mkdirSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || dirname(path) === path) throw error;
    makeDir(dirname(path));
    try {
      mkdirSync(path);
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== "EEXIST") throw again;
    }
  }
}
