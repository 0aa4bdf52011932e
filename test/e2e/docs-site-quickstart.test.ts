/**
 * The quickstart, executed: every ```sh block of docs/quickstart.md, in order, exactly as
 * written, in one bash session at the repository root against the test cluster — except the
 * blocks marked `quickstart-test: skip` (making a cluster). That includes the function section:
 * `krt run --function`, RBAC for one Run's runs/invoke, and `krt invoke` through the chart's gateway. kubectl and helm are the binaries the
 * local cluster build made. This installs the chart cluster-wide (the quickstart's default) in
 * namespace `kruntimes` and uninstalls it again, as the page's last step does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { KubeClient } from "@kruntimes/kube";
import { binaryPath } from "../localcluster/binaries.ts";
import { testCluster } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { applyChartCrds, HELM_MISSING, helmPath, ROOT, removeRelease } from "./chart-support.ts";
import { shellBlocks } from "./docs-site-support.ts";

const cluster = testCluster();
if (cluster && !helmPath()) throw new Error(HELM_MISSING);
const suite = cluster ? describe : describe.skip;
const NAMESPACE = "kruntimes";

suite("quickstart (docs/quickstart.md, run as written)", () => {
  const kubeconfig = cluster?.kubeconfig as string;
  const client = cluster?.client as KubeClient;
  const blocks = shellBlocks(readFileSync(join(ROOT, "docs/quickstart.md"), "utf8"));

  beforeAll(async () => {
    await removeRelease(kubeconfig, client, "kruntimes", NAMESPACE);
    // A shared test cluster already has the CRDs from other suites: make them Helm's, as a
    // previous `helm install` would have left them (see docs/install.md, Upgrades).
    await applyChartCrds(client);
  }, 120_000);

  afterAll(async () => {
    await removeRelease(kubeconfig, client, "kruntimes", NAMESPACE);
  }, 120_000);

  test("the page has the steps the test expects (cluster blocks skipped, the rest run)", () => {
    expect(blocks.filter((b) => b.skip)).toHaveLength(2);
    const run = blocks.filter((b) => !b.skip).map((b) => b.code);
    expect(run[0]).toStartWith("helm install kruntimes ./chart");
    expect(run.at(-1)).toContain("helm uninstall kruntimes");
  });

  test("every command works on the cluster, copied as written", async () => {
    const bin = mkdtempSync(join(tmpdir(), "krt-quickstart-bin-"));
    symlinkSync(binaryPath("kubectl", ROOT, process.env), join(bin, "kubectl"));
    symlinkSync(helmPath() as string, join(bin, "helm"));
    const home = mkdtempSync(join(tmpdir(), "krt-quickstart-home-"));
    const script = [
      "set -euo pipefail",
      ...blocks
        .map((b, i) => ({ ...b, i }))
        .filter((b) => !b.skip)
        .map((b) => `echo "::block ${b.i}::"\n${b.code}`),
      'echo "::done::"',
    ].join("\n");
    const {
      code,
      stdout: out,
      stderr: err,
    } = await runProcess(["bash", "-c", script], {
      cwd: ROOT,
      env: {
        PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
        HOME: home,
        KUBECONFIG: kubeconfig,
      },
    });
    const failedBlock = [...out.matchAll(/::block (\d+)::/g)].at(-1)?.[1];
    expect({
      code,
      failedBlock: code === 0 ? undefined : blocks[Number(failedBlock)]?.code,
      err: code ? err : "",
    }).toEqual({ code: 0, failedBlock: undefined, err: "" });
    expect(out).toContain("::done::");
    expect(out).toContain("STATUS: deployed");
    expect(out).toMatch(/runtime\.kruntimes\.io\/bash condition met/);
    expect(out).toMatch(/hello from bash-[a-z0-9]+-[a-z0-9]+/);
    expect(out).toMatch(/python 3\.\d+/);
    expect(out).toContain("Succeeded");
    // The function: Ready, then two calls through the gateway, the module's state kept.
    expect(out).toContain('{"greeting":"hello, krt","calls":1}');
    expect(out).toContain("status: 200\n");
    expect(out).toContain('{"greeting":"hello, again","calls":2}');
    expect(out).toContain('release "kruntimes" uninstalled');
  }, 480_000);
});
