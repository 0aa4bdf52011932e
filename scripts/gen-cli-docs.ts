/**
 * Writes docs/cli-reference.md from krt's command definitions (krt/docs/cli-reference.ts).
 * Usage: bun scripts/gen-cli-docs.ts [--out DIR]   (DIR defaults to the repository root)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createCli } from "../krt/cli.ts";
import { renderCliReference } from "../krt/docs/cli-reference.ts";

const { values } = parseArgs({ options: { out: { type: "string" } } });
const root = resolve(values.out ?? join(import.meta.dir, ".."));
const target = join(root, "docs", "cli-reference.md");
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, renderCliReference(createCli()));
console.log("wrote docs/cli-reference.md");
