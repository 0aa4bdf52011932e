/**
 * Releases for the release and upgrade-guide suites: scripts/release.sh run for real into a temp
 * directory, signed with a cosign key generated there (cosign generate-key-pair with
 * COSIGN_PASSWORD). Each (version, platforms) pair is cut once per process until discarded.
 * Also: the path of the cached cosign, and a CycloneDX validator (the CycloneDX project's Python library with
 * its JSON schemas, in a venv cached by version).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cacheDir, readVersions } from "../localcluster/binaries.ts";
import { fillVenv } from "../support/cache-fill.ts";
import { runProcess } from "../support/process.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const KEY_PASSWORD = "release-test-password";
const CYCLONEDX_LIB = "cyclonedx-python-lib[json-validation]==11.12.0";

export interface Release {
  /** Version and platforms: what `release` was asked for. */
  id: string;
  version: string;
  dir: string;
  /** The key pair's directory: cosign.key and cosign.pub. */
  keys: string;
  seconds: number;
  log: string;
}

/** The cached cosign (scripts/release.sh builds it). */
export function cosignPath(): string {
  const v = readVersions(ROOT) as unknown as Record<string, string>;
  return join(cacheDir(process.env), "bin", `cosign-${v.COSIGN_VERSION}`, "cosign");
}

async function must(cmd: string[], env: Record<string, string | undefined>, cwd = ROOT) {
  const r = await runProcess(cmd, { cwd, env });
  if (r.code !== 0) throw new Error(`${cmd.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** scripts/release.sh with the given arguments and environment (for the refusal tests). */
export function runRelease(args: string[], env: Record<string, string | undefined> = {}) {
  return runProcess(["bash", join(ROOT, "scripts/release.sh"), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      KRT_RELEASE_ALLOW_DIRTY: "1",
      COSIGN_KEY: undefined,
      COSIGN_PASSWORD: undefined,
      ...env,
    },
  });
}

const cut = new Map<string, Promise<Release>>();

/** Removes a release's files (and forgets it, so a later `release` cuts it again). */
export function discard(r: Release | undefined): void {
  if (!r) return;
  cut.delete(r.id);
  rmSync(join(r.dir, ".."), { recursive: true, force: true });
}

/** Cuts `version` for `platforms` (default: all four) into a fresh temp directory, once. */
export function release(version: string, platforms?: string): Promise<Release> {
  const id = `${version} ${platforms ?? "all"}`;
  let p = cut.get(id);
  if (!p) {
    p = (async () => {
      await must(["bash", join(ROOT, "test/localcluster/build/build-binaries.sh"), "cosign"], process.env);
      sweep();
      mkdirSync(BASE, { recursive: true });
      const base = mkdtempSync(join(BASE, "release-"));
      const keys = join(base, "keys");
      mkdirSync(keys);
      await must(
        [cosignPath(), "generate-key-pair"],
        { ...process.env, COSIGN_PASSWORD: KEY_PASSWORD },
        keys,
      );
      const dir = join(base, version);
      const start = performance.now();
      const r = await runRelease([version, dir], {
        COSIGN_KEY: join(keys, "cosign.key"),
        COSIGN_PASSWORD: KEY_PASSWORD,
        ...(platforms ? { KRT_RELEASE_PLATFORMS: platforms } : {}),
      });
      const seconds = (performance.now() - start) / 1000;
      if (r.code !== 0) throw new Error(`scripts/release.sh ${version} failed (${r.code}):\n${r.stderr}`);
      // The script's step lines carry their offsets: where the time went.
      const steps = r.stderr.split("\n").filter((l) => l.startsWith("[release "));
      console.log(`release ${id}: ${seconds.toFixed(1)} s\n${steps.join("\n")}`);
      return { id, version, dir, keys, seconds, log: r.stderr };
    })();
    cut.set(id, p);
  }
  return p;
}

// A process's releases (about a gigabyte each) live in $TMPDIR/krt-releases-<pid>; each suite
// discards its own in afterAll, and a later process removes those of processes that are gone (a
// killed run leaves them behind; bun test runs no exit handlers).
const BASE = join(tmpdir(), `krt-releases-${process.pid}`);
function sweep(): void {
  for (const d of readdirSync(tmpdir())) {
    const pid = Number(/^krt-releases-(\d+)$/.exec(d)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(join(tmpdir(), d), { recursive: true, force: true });
    }
  }
}

let validator: Promise<string> | undefined;

/** The python of a venv with the CycloneDX library (from PyPI, once per pinned version). */
function cyclonedxPython(): Promise<string> {
  validator ??= (async () => {
    const venv = join(cacheDir(process.env), "venv", `cyclonedx-${CYCLONEDX_LIB.split("==")[1]}`);
    const py = join(venv, "bin", "python");
    await fillVenv(venv, [[CYCLONEDX_LIB]]);
    return py;
  })();
  return validator;
}

const VALIDATE = `
import json, sys
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
out = {}
validators = {}
for f in sys.argv[1:]:
    text = open(f, encoding="utf-8").read()
    doc = json.loads(text)
    if doc.get("bomFormat") != "CycloneDX":
        out[f] = "bomFormat is not CycloneDX"
        continue
    v = doc["specVersion"]
    validators.setdefault(v, JsonStrictValidator(SchemaVersion.from_version(v)))
    err = validators[v].validate_str(text)
    out[f] = None if err is None else str(err)
print(json.dumps(out))
`;

/** Each file's validation error against the CycloneDX JSON schema of its specVersion, or null. */
export async function validateCycloneDx(files: string[]): Promise<Record<string, string | null>> {
  const py = await cyclonedxPython();
  const r = await must([py, "-c", VALIDATE, ...files], process.env);
  return JSON.parse(r.stdout) as Record<string, string | null>;
}
