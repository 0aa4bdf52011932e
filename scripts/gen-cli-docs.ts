/**
 * Writes docs/cli-reference.md from krt's command definitions (krt/docs/cli-reference.ts),
 * formatted by biome as the rest of the repository is, so `biome check .` and the staleness check
 * (scripts/check-cli-docs.sh) agree.
 * Usage: bun scripts/gen-cli-docs.ts [--out DIR]   (DIR defaults to the repository root)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createCli } from "../krt/cli.ts";
import { renderCliReference } from "../krt/docs/cli-reference.ts";

const REPO = join(import.meta.dir, "..");
const FILE = "docs/cli-reference.md";
const { values } = parseArgs({ options: { out: { type: "string" } } });
const root = resolve(values.out ?? REPO);

const biome = Bun.spawn([join(REPO, "node_modules/.bin/biome"), "format", `--stdin-file-path=${FILE}`], {
  cwd: REPO,
  stdin: new Blob([renderCliReference(createCli())]),
  stdout: "pipe",
  stderr: "pipe",
});
const [text, err, code] = await Promise.all([
  new Response(biome.stdout).text(),
  new Response(biome.stderr).text(),
  biome.exited,
]);
if (code !== 0) {
  console.error(`biome format failed (${code}): ${err}`);
  process.exit(1);
}
const target = join(root, FILE);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, text);
console.log(`wrote ${FILE}`);
