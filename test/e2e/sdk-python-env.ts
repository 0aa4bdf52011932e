/**
 * The Python SDK's venv for the suites that run Python (sdk-python, examples):
 * ~/.cache/kruntimes/venv/sdk-python-<hash of sdk/python/requirements-test.txt>, pip from PyPI
 * once per pin set; the package itself is installed fresh from ./sdk/python on every call, without
 * its dependencies and without build isolation.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../support/process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SDK = join(ROOT, "sdk", "python");

/** The venv's python, with the pinned dependencies and the SDK as it is in the tree. */
export async function pythonWithSdk(): Promise<string> {
  const pins = readFileSync(join(SDK, "requirements-test.txt"));
  const hash = createHash("sha256").update(pins).digest("hex").slice(0, 12);
  const cache =
    process.env.KRT_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "kruntimes");
  const venv = join(cache, "venv", `sdk-python-${hash}`);
  const py = join(venv, "bin", "python");
  const run = async (cmd: string[]) => {
    const r = await runProcess(cmd, {
      cwd: ROOT,
      env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
    });
    if (r.code !== 0) throw new Error(`${cmd.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  };
  if (!existsSync(join(venv, ".complete"))) {
    rmSync(venv, { recursive: true, force: true });
    mkdirSync(join(cache, "venv"), { recursive: true });
    await run(["python3", "-m", "venv", venv]);
    await run([py, "-m", "pip", "install", "--quiet", "-r", join(SDK, "requirements-test.txt")]);
    writeFileSync(join(venv, ".complete"), "");
  }
  await run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", SDK]);
  return py;
}
