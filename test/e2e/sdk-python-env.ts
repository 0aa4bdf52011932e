/**
 * The Python SDK's venv for the suites that run Python (sdk-python, examples):
 * ~/.cache/kruntimes/venv/sdk-python-<hash>, where the hash covers the pins of
 * sdk/python/requirements-test.txt and the SDK's sources. The pins come from PyPI and the package
 * is installed from ./sdk/python (non-editable, without build isolation) in the same fill, so a
 * venv never changes once complete: two suites at once share it without one reinstalling the SDK
 * under the other's running Python. Editing the SDK gives a new venv.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { cacheDir } from "../localcluster/binaries.ts";
import { fillVenv } from "../support/cache-fill.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SDK = join(ROOT, "sdk", "python");

/** The files a non-editable install copies: pyproject, README and src/ (not tests/). */
function sdkSourceHash(): string {
  const h = createHash("sha256");
  const files = ["pyproject.toml", "README.md", "requirements-test.txt"];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "__pycache__" && !e.name.endsWith(".egg-info")) walk(p);
      } else files.push(relative(SDK, p));
    }
  };
  walk(join(SDK, "src"));
  for (const f of files.sort())
    h.update(f)
      .update("\0")
      .update(readFileSync(join(SDK, f)))
      .update("\0");
  return h.digest("hex").slice(0, 12);
}

/** The venv's python, with the pinned dependencies and the SDK as it is in the tree. */
export async function pythonWithSdk(): Promise<string> {
  const venv = join(cacheDir(process.env), "venv", `sdk-python-${sdkSourceHash()}`);
  await fillVenv(venv, [
    ["-r", join(SDK, "requirements-test.txt")],
    ["--no-deps", "--no-build-isolation", "--no-index", SDK],
  ]);
  return join(venv, "bin", "python");
}
