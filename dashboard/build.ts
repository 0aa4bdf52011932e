#!/usr/bin/env bun
/** Writes the bundled web UI to a directory (the image serves it with --assets-dir). */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildWeb } from "./server/assets.ts";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: bun dashboard/build.ts <outdir>\n");
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const out = await buildWeb();
for (const o of out.outputs) await Bun.write(join(dir, o.path), o);
process.stdout.write(`${out.outputs.map((o) => o.path).join("\n")}\n`);
