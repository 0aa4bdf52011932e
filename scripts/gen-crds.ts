/**
 * Writes the CRDs and the API reference from the schemas in api/:
 *   chart/crds/runtimes.kruntimes.io.yaml, chart/crds/runs.kruntimes.io.yaml, docs/api-reference.md
 * Usage: bun scripts/gen-crds.ts [--out DIR]   (DIR defaults to the repository root)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { crds } from "../api/index.ts";
import { generatedFiles } from "../api/src/crd/render.ts";

const { values } = parseArgs({ options: { out: { type: "string" } } });
const root = resolve(values.out ?? join(import.meta.dir, ".."));

for (const [file, text] of generatedFiles(crds)) {
  const target = join(root, file);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`wrote ${file}`);
}
