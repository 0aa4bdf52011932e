/**
 * Fills a cache directory once even when several suites ask at the same moment: the TypeScript
 * side of scripts/lib/cache-fill.sh (a flock on <dir>.lock, a re-check of <dir>/.complete under
 * it, the fill in place, then the marker), so the shell scripts and the suites share one lock.
 */
import { join } from "node:path";
import { runProcess } from "./process.ts";

const CACHE_FILL = join(import.meta.dir, "..", "..", "scripts", "lib", "cache-fill.sh");

/** Runs `fill... <dir>` unless <dir> is already complete; a concurrent caller waits for it. */
export async function fillCache(dir: string, fill: string[], env = process.env): Promise<void> {
  const r = await runProcess(["bash", CACHE_FILL, dir, ...fill], { env });
  if (r.code !== 0)
    throw new Error(`filling ${dir} with ${fill.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
}

const quote = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;

/** A venv at <dir> with each `pip install <args...>` of `installs` done in it in order, once. */
export function fillVenv(dir: string, installs: string[][], env = process.env): Promise<void> {
  // cache-fill.sh passes the directory as the last argument ($1 here).
  const pip = installs.map(
    (args) => `"$1/bin/pip" install --quiet --disable-pip-version-check ${args.map(quote).join(" ")}`,
  );
  return fillCache(dir, ["bash", "-c", ['python3 -m venv "$1"', ...pip].join(" && "), "bash"], env);
}
