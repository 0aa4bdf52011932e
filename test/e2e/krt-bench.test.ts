/**
 * krt bench end to end, tiny: the compiled binary against a real controller (namespaced to a test
 * namespace) and real runtimed + Runtime Server pods — every number comes from real Runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RunResource, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { BenchResult } from "../../bench/hotpath/bench.ts";
import type { ControllerProcess } from "../../controller/testing/cluster/controller-process.ts";
import { eventually, testCluster, type testNamespace } from "../support/cluster.ts";
import { type RealRunsEnv, realRunsEnv, runKrt, runsExecute, startKrt } from "./krt-binary.ts";

const cluster = testCluster();
const suite = cluster && runsExecute ? describe : describe.skip;

suite("krt bench (compiled binary, real Runs)", () => {
  const client = cluster?.client as KubeClient;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let controller: ControllerProcess | undefined;
  let bin = "";
  let env: RealRunsEnv | undefined;

  beforeAll(async () => {
    env = await realRunsEnv(client, cluster?.kubeconfig ?? "", "krt-bench");
    ({ bin, ns, controller } = env);
  }, 120_000);
  afterAll(() => env?.close());

  test("a tiny hot-path run: every Run succeeds, each stage is measured, baselines run, nothing is left", async () => {
    const r = await runKrt(
      bin,
      [
        "bench",
        "-n",
        ns.name,
        "--runs",
        "6",
        "-c",
        "3",
        "--pods",
        "1",
        "--slots",
        "4",
        "--ceiling-objects",
        "20",
        "--jobs",
        "2",
        "-o",
        "json",
      ],
      { kubeconfig: cluster?.kubeconfig ?? "" },
    );
    if (r.code !== 0)
      throw new Error(`krt bench exited ${r.code}:\n${r.stderr}\n${controller?.log().slice(-2000)}`);
    const res = JSON.parse(r.stdout) as BenchResult;
    expect(res.scenarios.length).toBe(1);
    const b = res.scenarios[0]?.breakdown;
    expect(b?.succeeded).toBe(6);
    expect(b?.failed).toBe(0);
    for (const stage of [
      "create",
      "schedule",
      "dispatch",
      "execution",
      "report",
      "observe",
      "complete",
    ] as const) {
      expect(b?.stages[stage].n).toBe(6);
      expect(b?.stages[stage].p50).toBeGreaterThanOrEqual(0);
    }
    expect(b?.stages.complete.p50).toBeGreaterThanOrEqual(b?.stages.schedule.p50 ?? 0);
    expect(b?.maxConcurrent).toBeGreaterThanOrEqual(1);
    expect(b?.maxConcurrent).toBeLessThanOrEqual(4);
    expect(res.ceiling?.writes).toBe(40);
    expect(res.ceiling?.writesPerSecond).toBeGreaterThan(0);
    expect(res.jobs?.complete.n).toBe(2);
    expect(res.namespace).toBe(ns.name);
    expect(r.stderr).toContain(`deleting what krt bench made in ${ns.name}`);

    const left = async (p: string) =>
      (
        await client.list<{ metadata: { deletionTimestamp?: string } }>(p, {
          labelSelector: "kruntimes.io/bench",
        })
      ).items.filter((o) => !o.metadata.deletionTimestamp).length;
    expect(await left(path(RunResource, ns.name))).toBe(0);
    expect(await left(path(RuntimeResource, ns.name))).toBe(0);
    expect(await left(path(R.configMaps, ns.name))).toBe(0);
  }, 300_000);

  const namespaceGone = async (name: string) => {
    const got = await client
      .get<{ status?: { phase?: string } }>(path(R.namespaces, undefined, name))
      .catch(() => undefined);
    return got === undefined || got.status?.phase === "Terminating";
  };

  test("a Runtime that never gets ready is a clear error, and the namespace krt made is deleted", async () => {
    // No controller watches the namespace krt bench makes for itself.
    const r = await runKrt(bin, ["bench", "--ready-timeout", "2s", "--no-ceiling", "--jobs", "0"], {
      kubeconfig: cluster?.kubeconfig ?? "",
    });
    expect(r.code).toBe(75);
    expect(r.stderr).toContain("was not ready within 2s: 0 ready, 0 available of 2");
    expect(r.stderr).toContain("hint: is the kruntimes controller running");
    const made = /namespace (krt-bench-[a-z0-9]+)/.exec(r.stderr)?.[1] ?? "";
    expect(made).not.toBe("");
    expect(await namespaceGone(made)).toBe(true);
  }, 60_000);

  test("Ctrl-C cleans up and exits 130", async () => {
    const live = startKrt(bin, ["bench", "--no-ceiling", "--jobs", "0"], {
      kubeconfig: cluster?.kubeconfig ?? "",
    });
    // Interrupted only once it is creating the Runtime: the cleanup under test has work to do.
    const creating = await eventually(
      "krt bench creating the Runtime",
      async () => live.stderr().includes("creating Runtime"),
      60_000,
    ).catch((e: Error) => e);
    live.interrupt();
    const r = await live.result;
    if (creating instanceof Error) throw creating;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain("interrupted: cleaning up");
    const made = /namespace (krt-bench-[a-z0-9]+)/.exec(r.stderr)?.[1] ?? "";
    expect(await namespaceGone(made)).toBe(true);
  }, 120_000);

  test("bad flags are usage errors before anything is created", async () => {
    for (const args of [
      ["bench", "--scenario", "nope"],
      ["bench", "--runtime", "ruby"],
      ["bench", "--runs", "0"],
      ["bench", "--timeout", "soon"],
      ["bench", "-A"],
      ["bench", "-o", "yaml"],
    ]) {
      const r = await runKrt(bin, args, { kubeconfig: cluster?.kubeconfig ?? "" });
      expect({ args, code: r.code }).toEqual({ args, code: 64 });
    }
  });
});
