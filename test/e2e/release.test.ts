/**
 * scripts/release.sh, run for real into a temp directory with a cosign key generated there: the
 * release holds exactly the expected files; each binary is an executable for its OS and CPU; the
 * linux-amd64 krt prints the version; SHA256SUMS and every cosign signature verify (and fail for a
 * changed file); VERIFY.md's commands pass as written; every SBOM is valid CycloneDX naming its
 * artifact and what is bundled in it. Needs no cluster. The release takes about a minute once
 * the tools are cached (cosign, syft and helm are built from the Go module proxy the first time).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../support/process.ts";
import { shellBlocks } from "./docs-site-support.ts";
import {
  cosignPath,
  discard,
  type Release,
  ROOT,
  release,
  runRelease,
  validateCycloneDx,
} from "./release-support.ts";

const VERSION = "0.1.0-rc.1";
const KRT = ["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"].map((p) => `krt-${p}`);
// In the order the script builds them (and VERIFY.md lists them): per platform, each component.
const COMPONENTS = ["linux-amd64", "linux-arm64"].flatMap((p) =>
  ["controller", "runtimed", "gateway", "runtime-server"].map((c) => `${c}-${p}`),
);
const CHART = `kruntimes-${VERSION}.tgz`;
const ARTIFACTS = [...KRT, ...COMPONENTS, CHART];
const SIGNED = [...ARTIFACTS.flatMap((a) => [a, `${a}.cdx.json`]), "SHA256SUMS"];

describe("scripts/release.sh refuses, saying what to do", () => {
  test("a VERSION that is not a semantic version", async () => {
    const r = await runRelease(["one"]);
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: "release: VERSION 'one' is not a semantic version like 0.2.0 or 0.2.0-rc.1\n",
    });
  });

  test("a final release without its dated CHANGELOG section", async () => {
    const r = await runRelease(["v9.9.9"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "release: CHANGELOG.md has no section '## [9.9.9] - YYYY-MM-DD'; write it (docs/release.md) and commit it first\n",
    );
  });

  test("a working tree with uncommitted changes (a clone of HEAD with one file changed)", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "krt-release-dirty-"));
    const clone = join(tmp, "clone");
    expect((await runProcess(["git", "clone", "--quiet", "--shared", ROOT, clone])).code).toBe(0);
    writeFileSync(join(clone, "README.md"), "changed\n");
    writeFileSync(join(tmp, "cosign.key"), "");
    const r = await runProcess(["bash", join(clone, "scripts/release.sh"), VERSION, join(tmp, "out")], {
      cwd: clone,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        COSIGN_KEY: join(tmp, "cosign.key"),
        COSIGN_PASSWORD: "",
      },
    });
    rmSync(tmp, { recursive: true, force: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "release: the working tree has uncommitted changes; commit them (or KRT_RELEASE_ALLOW_DIRTY=1 for a test release)\n",
    );
  });

  test("no signing key, or an output directory that is not empty", async () => {
    const out = mkdtempSync(join(tmpdir(), "krt-release-refused-"));
    const noKey = await runRelease([VERSION, out]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toBe(
      "release: set COSIGN_KEY to a cosign private key (make one: cosign generate-key-pair)\n",
    );
    writeFileSync(join(out, "old"), "");
    const full = await runRelease([VERSION, out], { COSIGN_KEY: "/dev/null", COSIGN_PASSWORD: "" });
    rmSync(out, { recursive: true, force: true });
    expect(full.stderr).toBe(`release: ${out} is not empty; choose a new directory or empty it\n`);
  });
});

/** The first 64 KiB of a file: headers and, for Mach-O, the load commands. */
function head(file: string): Buffer {
  const fd = openSync(file, "r");
  const b = Buffer.alloc(65536);
  const n = readSync(fd, b, 0, b.length, 0);
  closeSync(fd);
  return b.subarray(0, n);
}

/** The load command types of a 64-bit Mach-O file. */
function machoCommands(b: Buffer): number[] {
  const cmds: number[] = [];
  let off = 32;
  for (let i = 0; i < b.readUInt32LE(16); i++) {
    cmds.push(b.readUInt32LE(off));
    off += b.readUInt32LE(off + 4);
  }
  return cmds;
}
const LC_CODE_SIGNATURE = 0x1d;

/** The executable format and CPU in a binary's header. */
function platformOf(file: string): string {
  const b = head(file);
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const machine = b.readUInt16LE(18);
    return `linux-${machine === 0x3e ? "amd64" : machine === 0xb7 ? "arm64" : machine}`;
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4);
    return `darwin-${cpu === 0x01000007 ? "amd64" : cpu === 0x0100000c ? "arm64" : cpu}`;
  }
  return "unknown";
}

interface CycloneDx {
  bomFormat: string;
  specVersion: string;
  metadata: { component: { name: string; version: string } };
  components?: {
    type: string;
    name: string;
    version?: string;
    hashes?: { alg: string; content: string }[];
  }[];
}

describe("a release", () => {
  let r: Release;
  const at = (f: string) => join(r.dir, f);
  const cosign = (args: string[], cwd?: string) =>
    runProcess([cosignPath(), ...args], { cwd: cwd ?? r.dir, env: process.env });

  beforeAll(async () => {
    r = await release(VERSION);
  }, 1_800_000);

  afterAll(() => discard(r));

  test("holds every artifact with its SBOM and signatures, cosign.pub and VERIFY.md, nothing else", () => {
    const expected = [...SIGNED.flatMap((f) => [f, `${f}.sigstore.json`]), "cosign.pub", "VERIFY.md"].sort();
    expect(readdirSync(r.dir).sort()).toEqual(expected);
    // The tail of the script's log: one line per step, the last saying what it made.
    expect(r.log).toMatch(/\] done: 56 files, \d+(\.\d+)?[MG]\n/);
  });

  test("each binary is an executable for its OS and CPU", () => {
    for (const b of [...KRT, ...COMPONENTS])
      expect(`${b}: ${platformOf(at(b))}`).toBe(`${b}: ${b.split("-").slice(-2).join("-")}`);
    // macOS runs only signed arm64 code: bun's cross-compile adds an (ad hoc) code signature.
    for (const b of KRT.filter((k) => k.includes("darwin")))
      expect(machoCommands(head(at(b)))).toContain(LC_CODE_SIGNATURE);
  });

  test.if(process.platform === "linux" && process.arch === "x64")(
    "krt-linux-amd64 says it is VERSION, from this commit",
    async () => {
      const v = await runProcess([at("krt-linux-amd64"), "version", "-o", "json"], {
        env: { PATH: process.env.PATH, HOME: tmpdir(), KUBECONFIG: "/nonexistent" },
      });
      expect(v.code).toBe(0);
      const client = JSON.parse(v.stdout).client as { version: string; bun: string; commit: string };
      // The commit VERIFY.md names (the release's HEAD), shortened as krt prints it.
      const built = /Built from commit `([0-9a-f]{40})/.exec(readFileSync(at("VERIFY.md"), "utf8"))?.[1];
      expect(client).toMatchObject({ version: VERSION, bun: Bun.version });
      expect(client.commit).toMatch(/^[0-9a-f]{12}(-dirty)?$/);
      expect(built).toStartWith(client.commit.replace("-dirty", ""));
      const text = await runProcess([at("krt-linux-amd64"), "version"], {
        env: { PATH: process.env.PATH, HOME: tmpdir(), KUBECONFIG: "/nonexistent" },
      });
      expect(text.stdout.split("\n")[0]).toStartWith(`krt ${VERSION} (commit `);
    },
  );

  test("a changed file fails both the checksum and its signature; another key fails the signature", async () => {
    const copy = mkdtempSync(join(tmpdir(), "krt-release-tampered-"));
    for (const f of [CHART, `${CHART}.sigstore.json`, "cosign.pub"]) copyFileSync(at(f), join(copy, f));
    copyFileSync(at("SHA256SUMS"), join(copy, "SHA256SUMS"));
    const bytes = readFileSync(join(copy, CHART));
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    writeFileSync(join(copy, CHART), bytes);
    const sum = await runProcess(["sha256sum", "--check", "--ignore-missing", "SHA256SUMS"], { cwd: copy });
    expect(sum.code).toBe(1);
    expect(sum.stdout).toContain(`${CHART}: FAILED`);
    const sig = await cosign(
      [
        "verify-blob",
        "--key",
        "cosign.pub",
        "--insecure-ignore-tlog=true",
        "--bundle",
        `${CHART}.sigstore.json`,
        CHART,
      ],
      copy,
    );
    expect(sig.code).not.toBe(0);
    expect(sig.stderr).toContain("invalid signature");
    // The untouched chart with a different public key: not verified either.
    copyFileSync(at(CHART), join(copy, CHART));
    await runProcess([cosignPath(), "generate-key-pair"], {
      cwd: copy,
      env: { ...process.env, COSIGN_PASSWORD: "other" },
    });
    const other = await cosign(
      [
        "verify-blob",
        "--key",
        "cosign.pub",
        "--insecure-ignore-tlog=true",
        "--bundle",
        `${CHART}.sigstore.json`,
        CHART,
      ],
      copy,
    );
    rmSync(copy, { recursive: true, force: true });
    expect(other.code).not.toBe(0);
  }, 60_000);

  test("SHA256SUMS lists every artifact and SBOM; VERIFY.md checks it and every signature (sha256sum, cosign verify-blob), run as written", async () => {
    const listed = readFileSync(at("SHA256SUMS"), "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+\*?/)[1]);
    expect(listed.sort()).toEqual(SIGNED.filter((f) => f !== "SHA256SUMS").sort());
    // The published key is the signing key's public half.
    expect(readFileSync(at("cosign.pub"), "utf8")).toBe(readFileSync(join(r.keys, "cosign.pub"), "utf8"));
    const blocks = shellBlocks(readFileSync(at("VERIFY.md"), "utf8"));
    expect(blocks).toHaveLength(1);
    const verify = (f: string) =>
      `cosign verify-blob --key cosign.pub --insecure-ignore-tlog=true --bundle ${f}.sigstore.json ${f}`;
    // The checksums' signature, the checksums, then every artifact's and SBOM's signature.
    expect((blocks[0]?.code ?? "").split("\n")).toEqual([
      verify("SHA256SUMS"),
      "sha256sum --check SHA256SUMS",
      ...SIGNED.filter((f) => f !== "SHA256SUMS").map(verify),
    ]);
    const bin = mkdtempSync(join(tmpdir(), "krt-release-verify-bin-"));
    symlinkSync(cosignPath(), join(bin, "cosign"));
    const run = await runProcess(["bash", "-euo", "pipefail", "-c", blocks[0]?.code ?? ""], {
      cwd: r.dir,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: tmpdir() },
    });
    rmSync(bin, { recursive: true, force: true });
    expect(run.code).toBe(0);
    expect(run.stderr.match(/Verified OK/g)).toHaveLength(SIGNED.length);
    expect(run.stdout.trim().split("\n").sort()).toEqual(listed.map((f) => `${f}: OK`).sort());
  }, 180_000);

  test("every SBOM is valid CycloneDX naming its artifact, what is bundled in it and its SHA-256", async () => {
    const sboms = ARTIFACTS.map((a) => at(`${a}.cdx.json`));
    const errors = await validateCycloneDx(sboms);
    expect(Object.values(errors)).toEqual(sboms.map(() => null));
    const sums = new Map(
      readFileSync(at("SHA256SUMS"), "utf8")
        .trim()
        .split("\n")
        .map((l) => {
          const [hash, file] = l.split(/\s+\*?/);
          return [file as string, hash as string];
        }),
    );
    const packages = (bom: CycloneDx) =>
      new Map((bom.components ?? []).filter((c) => c.type === "library").map((c) => [c.name, c.version]));
    for (const a of ARTIFACTS) {
      const bom = JSON.parse(readFileSync(at(`${a}.cdx.json`), "utf8")) as CycloneDx;
      expect(bom.bomFormat).toBe("CycloneDX");
      expect(bom.metadata.component).toMatchObject({ name: a, version: VERSION });
      // The artifact itself, as a file with the digest SHA256SUMS has for it.
      const self = bom.components?.find((c) => c.type === "file" && c.name.endsWith(a));
      expect(self?.hashes).toContainEqual({ alg: "SHA-256", content: sums.get(a) as string });
      if (a === CHART) continue;
      const pkgs = packages(bom);
      const [os, arch] = a.split("-").slice(-2) as [string, string];
      const bunPkg = `@oven/bun-${os}-${arch === "amd64" ? "x64" : "aarch64"}`;
      expect(`${a}: ${pkgs.get(bunPkg)}`).toBe(`${a}: ${Bun.version}`);
      expect(`${a}: ${pkgs.get("@kruntimes/api")}`).toBe(`${a}: ${VERSION}`);
      if (a.startsWith("krt-")) expect(pkgs.get("clipanion")).toBe("3.2.1");
      if (a.startsWith("controller-"))
        expect([...pkgs.keys()]).toEqual(expect.arrayContaining(["pino", "prom-client"]));
    }
  }, 300_000);

  test("the chart package is the chart at VERSION, images tagged VERSION", async () => {
    const chart = await runProcess(["tar", "-xzOf", at(CHART), "kruntimes/Chart.yaml"]);
    expect(chart.stdout).toContain(`\nversion: ${VERSION}\n`);
    expect(chart.stdout).toContain(`\nappVersion: ${VERSION}\n`);
    const crds = await runProcess(["tar", "-tzf", at(CHART)]);
    expect(crds.stdout).toContain("kruntimes/crds/runs.kruntimes.io.yaml");
    expect(crds.stdout).not.toContain("kruntimes/hack/");
  });
});
