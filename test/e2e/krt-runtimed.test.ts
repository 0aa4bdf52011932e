/**
 * krt against the real execution path: a namespaced controller, runtimed and the Runtime Server
 * as the pods' containers. `krt run --follow` and `krt logs` read what runtimed really logged,
 * including the output of an attempt that timed out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KubeClient } from "@kruntimes/kube";
import { createPool, waitPoolReady } from "../../bench/hotpath/runtime-pool.ts";
import type { ControllerProcess } from "../../controller/testing/cluster/controller-process.ts";
import { ExitCode } from "../../krt/exit-codes.ts";
import { eventually, testCluster, type testNamespace } from "../support/cluster.ts";
import { type KrtResult, type RealRunsEnv, realRunsEnv, runKrt, runsExecute } from "./krt-binary.ts";

const cluster = testCluster();
const suite = cluster && runsExecute ? describe : describe.skip;

suite("krt with real runtimed (compiled binary)", () => {
  const client = cluster?.client as KubeClient;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let controller: ControllerProcess | undefined;
  let bin = "";
  let env: RealRunsEnv | undefined;
  const krt = (...args: string[]): Promise<KrtResult> =>
    runKrt(bin, [...args.slice(0, 1), "-n", ns.name, ...args.slice(1)], {
      kubeconfig: cluster?.kubeconfig ?? "",
    });

  beforeAll(async () => {
    env = await realRunsEnv(client, cluster?.kubeconfig ?? "", "krt-runtimed");
    ({ bin, ns, controller } = env);
    const pool = {
      namespace: ns.name,
      name: "bash",
      image: "ghcr.io/kruntimes/bash",
      pods: 1,
      slotsPerPod: 4,
    };
    await createPool(client, pool);
    await waitPoolReady(client, pool, 120_000, new AbortController().signal);
  }, 180_000);
  afterAll(() => env?.close());

  test("run --follow streams both streams and exits with the script's code; logs prints them again", async () => {
    const r = await krt(
      "run",
      "--runtime",
      "bash",
      "--name",
      "both",
      "--follow",
      "--",
      "echo out1; echo err1 >&2; echo out2; exit 3",
    );
    if (r.code !== 3) throw new Error(`exit ${r.code}: ${r.stderr}\n${controller?.log().slice(-2000)}`);
    expect(r.stdout).toBe("out1\nout2\n");
    expect(r.stderr).toContain("err1\n");
    expect(r.stderr).toContain("run both: Failed, exit code 3");
    const logs = await krt("logs", "both");
    expect(logs.code).toBe(0);
    expect(logs.stdout).toBe("out1\nout2\n");
    expect(logs.stderr).toBe("err1\n");
  }, 60_000);

  test("a timed-out attempt's output is still there", async () => {
    const r = await krt(
      "run",
      "--runtime",
      "bash",
      "--name",
      "slow",
      "--timeout",
      "1s",
      "--follow",
      "--",
      "echo before; sleep 10; echo never",
    );
    expect(r.code).toBe(ExitCode.RunTimeout);
    expect(r.stdout).toBe("before\n");
    const logs = await krt("logs", "slow");
    expect(logs.stdout).toBe("before\n");
  }, 60_000);

  test("output printed before krt logs -f attaches is not lost", async () => {
    const started = await krt(
      "run",
      "--runtime",
      "bash",
      "--name",
      "late",
      "--",
      "for i in 1 2 3 4 5; do echo line $i; sleep 0.2; done",
    );
    expect(started.code).toBe(0);
    // Attach only once output exists (not after a guessed pause): what came before must be there.
    await eventually(
      "late's first line logged",
      async () => (await krt("logs", "late")).stdout.includes("line 1\n"),
      60_000,
    );
    const f = await krt("logs", "-f", "late");
    expect(f.code).toBe(0);
    expect(f.stdout).toBe("line 1\nline 2\nline 3\nline 4\nline 5\n");
  }, 60_000);
});
