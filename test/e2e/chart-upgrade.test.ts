/**
 * The install and upgrade guide (docs/install.md), executed: two linux/amd64 releases cut with
 * scripts/release.sh, then the page's blocks marked `install-guide-test`, as written, in one
 * directory of downloaded files per release — verify and install the older release, put its krt
 * on the PATH, verify and upgrade to the newer one (its CRDs first), and roll back. Only the
 * `VERSION=` lines get the test's versions. Between the steps the cluster is checked: which
 * images the controller and the bash pool run, and that Runs succeed. Like the quickstart, this
 * installs cluster-wide as release `kruntimes` in namespace `kruntimes` and removes it at the end.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isTerminalPhase, type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { binaryPath } from "../localcluster/binaries.ts";
import { eventually, testCluster } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { applyChartCrds, HELM_MISSING, helmPath, ROOT, removeRelease } from "./chart-support.ts";
import { cosignPath, discard, type Release, release } from "./release-support.ts";

const cluster = testCluster();
if (cluster && !helmPath()) throw new Error(HELM_MISSING);
const suite = cluster ? describe : describe.skip;
const NAMESPACE = "kruntimes";
const OLD = "0.1.0-rc.1";
const NEW = "0.1.0-rc.2";

/** docs/install.md's blocks marked `<!-- install-guide-test: <step> -->`, by step, in order. */
export function guideBlocks(markdown: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const re = /<!--\s*install-guide-test:\s*(\w+)\s*-->\s*\n\s*```sh\n([\s\S]*?)```/g;
  for (const m of markdown.matchAll(re)) {
    const step = m[1] as string;
    out.set(step, [...(out.get(step) ?? []), (m[2] ?? "").trimEnd()]);
  }
  return out;
}

interface Deployment {
  spec: { template: { spec: { containers: { image: string; args?: string[] }[] } } };
}

suite("install and upgrade guide (docs/install.md, run as written with two releases)", () => {
  const kubeconfig = cluster?.kubeconfig as string;
  const client = cluster?.client as KubeClient;
  const blocks = guideBlocks(readFileSync(join(ROOT, "docs/install.md"), "utf8"));
  const bin = mkdtempSync(join(tmpdir(), "krt-guide-bin-"));
  const home = mkdtempSync(join(tmpdir(), "krt-guide-home-"));
  const temps = [bin, home];
  let older: Release;
  let newer: Release;

  /** A directory holding the release's files, as a user's download would (links, not copies). */
  const download = (r: Release) => {
    const parent = mkdtempSync(join(tmpdir(), "krt-guide-download-"));
    temps.push(parent);
    const dir = join(parent, r.version);
    mkdirSync(dir);
    for (const f of readdirSync(r.dir)) symlinkSync(join(r.dir, f), join(dir, f));
    return dir;
  };

  /** The `version` block with the test's version, then the steps' blocks, in one bash in `dir`. */
  const runGuide = async (dir: string, versionBlock: number, version: string, steps: string[]) => {
    const v = blocks.get("version")?.[versionBlock] ?? "";
    expect(v).toMatch(/^VERSION=\S+ +# .*$/);
    const script = [
      "set -euo pipefail",
      `VERSION=${version}`,
      ...steps.flatMap((s) => blocks.get(s) ?? []),
    ].join("\n");
    return runProcess(["bash", "-c", script], {
      cwd: dir,
      env: {
        PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
        HOME: home,
        KUBECONFIG: kubeconfig,
      },
    });
  };

  const controllerImage = async () =>
    (await client.get<Deployment>(path(R.deployments, NAMESPACE, "kruntimes-controller"))).spec.template.spec
      .containers[0]?.image;

  const bashRuns = async (note: string) => {
    const created = await client.create<Run>(path(RunResource, NAMESPACE), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { generateName: "guide-" },
      spec: { runtime: "bash", mode: { task: {} }, source: { inline: `echo ${note}` } },
    });
    const run = await eventually(
      `Run ${created.metadata.name} to finish`,
      async () => {
        const r = await client.get<Run>(path(RunResource, NAMESPACE, created.metadata.name));
        return isTerminalPhase(r.status?.phase) ? r : undefined;
      },
      90_000,
    );
    expect({ phase: run.status?.phase, out: run.status?.stdoutTail }).toEqual({
      phase: "Succeeded",
      out: `${note}\n`,
    });
  };

  /** The bash Runtime Ready on pods of `image`. */
  const bashOn = (image: string) =>
    eventually(
      `the bash Runtime Ready on ${image}`,
      async () => {
        const rt = await client.get<Runtime>(path(RuntimeResource, NAMESPACE, "bash"));
        const ready = rt.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
        const current = rt.status?.observedGeneration === rt.metadata.generation;
        return ready && current && rt.spec.template.spec.containers[0]?.image === image ? rt : undefined;
      },
      180_000,
    );

  beforeAll(async () => {
    symlinkSync(binaryPath("kubectl", ROOT, process.env), join(bin, "kubectl"));
    symlinkSync(helmPath() as string, join(bin, "helm"));
    [older, newer] = [await release(OLD, "linux/amd64"), await release(NEW, "linux/amd64")];
    symlinkSync(cosignPath(), join(bin, "cosign"));
    await removeRelease(kubeconfig, client, "kruntimes", NAMESPACE);
    // A shared test cluster already has the CRDs from other suites: make them Helm's, as a
    // previous `helm install` would have left them.
    await applyChartCrds(client);
  }, 1_800_000);

  afterAll(async () => {
    await removeRelease(kubeconfig, client, "kruntimes", NAMESPACE);
    for (const d of temps) rmSync(d, { recursive: true, force: true });
    discard(older);
    discard(newer);
  }, 120_000);

  test("the page has the steps the test runs", () => {
    expect([...blocks.keys()]).toEqual(["version", "install", "krt", "upgrade", "rollback"]);
    expect(blocks.get("version")).toHaveLength(2);
    expect(blocks.get("install")?.[0]).toContain('helm install kruntimes "kruntimes-$VERSION.tgz"');
    expect(blocks.get("upgrade")?.[0]).toContain('helm upgrade kruntimes "kruntimes-$VERSION.tgz"');
  });

  test.if(process.platform === "linux" && process.arch === "x64")(
    "install a verified release, its krt on the PATH; upgrade to the next, CRDs first; roll back",
    async () => {
      const install = await runGuide(download(older), 0, OLD, ["install", "krt"]);
      expect({ code: install.code, err: install.code ? install.stderr : "" }).toEqual({ code: 0, err: "" });
      expect(install.stdout).toContain(`kruntimes-${OLD}.tgz: OK`);
      expect(install.stdout).toContain("STATUS: deployed");
      expect(install.stdout).toContain(`krt ${OLD} (commit `);
      expect(await controllerImage()).toBe(`ghcr.io/kruntimes/controller:${OLD}`);
      await bashOn(`ghcr.io/kruntimes/bash:${OLD}`);
      await bashRuns("before-upgrade");

      const upgrade = await runGuide(download(newer), 1, NEW, ["upgrade"]);
      expect({ code: upgrade.code, err: upgrade.code ? upgrade.stderr : "" }).toEqual({ code: 0, err: "" });
      expect(upgrade.stdout).toMatch(
        /customresourcedefinition\.apiextensions\.k8s\.io\/runs\.kruntimes\.io serverside-applied/,
      );
      expect(upgrade.stdout).toContain("REVISION: 2");
      expect(upgrade.stdout).toContain(`krt ${NEW} (commit `);
      expect(await controllerImage()).toBe(`ghcr.io/kruntimes/controller:${NEW}`);
      const dep = await client.get<Deployment>(path(R.deployments, NAMESPACE, "kruntimes-controller"));
      expect(dep.spec.template.spec.containers[0]?.args).toContain(
        `--runtimed-image=ghcr.io/kruntimes/runtimed:${NEW}`,
      );
      await bashOn(`ghcr.io/kruntimes/bash:${NEW}`);
      await bashRuns("after-upgrade");

      const back = await runGuide(download(newer), 1, NEW, ["rollback"]);
      expect({ code: back.code, err: back.code ? back.stderr : "" }).toEqual({ code: 0, err: "" });
      expect(back.stdout).toContain("Rollback was a success");
      expect(await controllerImage()).toBe(`ghcr.io/kruntimes/controller:${OLD}`);
      await bashOn(`ghcr.io/kruntimes/bash:${OLD}`);
      await bashRuns("after-rollback");
    },
    900_000,
  );
});
