/**
 * scripts/up.sh, the README's "bring the system up" command, against the cluster in KUBECONFIG:
 * it installs the chart (release `kruntimes`, namespace `kruntimes`, cluster-wide like a real
 * install), waits for the built-in Runtimes and runs a first Run whose output and status it
 * prints. The release and namespace are removed afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KubeClient } from "@kruntimes/kube";
import { testCluster } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { applyChartCrds, HELM_MISSING, helmPath, ROOT, removeRelease } from "./chart-support.ts";

const cluster = testCluster();
if (cluster && !helmPath()) throw new Error(HELM_MISSING);
const suite = cluster ? describe : describe.skip;

suite("scripts/up.sh on an existing cluster", () => {
  const kubeconfig = cluster?.kubeconfig as string;
  const client = cluster?.client as KubeClient;

  beforeAll(async () => {
    await removeRelease(kubeconfig, client, "kruntimes", "kruntimes");
    // Other suites on a shared cluster apply the CRDs as their own field manager.
    await applyChartCrds(client);
  }, 120_000);

  afterAll(async () => {
    await removeRelease(kubeconfig, client, "kruntimes", "kruntimes");
  }, 120_000);

  test("installs kruntimes and prints a first Run that succeeded", async () => {
    const {
      code,
      stdout: out,
      stderr: err,
    } = await runProcess(["bash", "scripts/up.sh"], {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    expect({ code, err: code === 0 ? "" : err.slice(-4000) }).toEqual({ code: 0, err: "" });
    expect(out).toContain("runtime.kruntimes.io/bash condition met");
    expect(out).toMatch(/hello from bash-\S+, GNU bash, version 5/);
    expect(out).toMatch(/Phase:\s+Succeeded/);
    expect(out).toMatch(/Exit code:\s+0/);
    expect(out).toContain("kruntimes is up.");
  }, 480_000);
});
