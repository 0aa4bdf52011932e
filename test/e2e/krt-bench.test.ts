/**
 * krt bench end to end, tiny: the compiled binary against a real controller (namespaced to a test
 * namespace) and real runtimed + Runtime Server pods — every number comes from real Runs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunResource, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { BenchResult } from "../../bench/hotpath/bench.ts";
import type { InvokeResult, SessionResult } from "../../bench/hotpath/gateway-scenarios.ts";
import { renderText } from "../../bench/hotpath/report.ts";
import type { ControllerProcess } from "../../controller/testing/cluster/controller-process.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { HELM_MISSING, helmPath, installNamespaced, removeRelease } from "./chart-support.ts";
import { buildKrt, type RealRunsEnv, realRunsEnv, runKrt, runsExecute, startKrt } from "./krt-binary.ts";

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
    // The Run write ceiling: 20 Runs × 3 writes, at the scenario's 3 in flight.
    expect(res.runCeiling).toMatchObject({ objects: 20, writes: 60, concurrency: 3 });
    expect(res.runCeiling?.idealRunsPerSecond).toBeCloseTo((res.runCeiling?.writesPerSecond ?? 0) / 3, 6);
    // The Run-shaped floor: one chain at a time and at the scenario's 3 in flight, every chain measured.
    expect(res.floors?.map((f) => [f.concurrency, f.oneAtATime, f.runs, f.rounds])).toEqual([
      [1, true, 90, 3],
      [3, false, 90, 3],
    ]);
    for (const f of res.floors ?? []) {
      for (const k of ["create", "bind", "finish", "complete"] as const) expect(f[k].n).toBe(90);
      // A chain holds its three hops end to end: complete is at least the largest of them.
      expect(f.complete.max).toBeGreaterThanOrEqual(Math.max(f.create.max, f.bind.max, f.finish.max));
      expect(f.complete.p50).toBeGreaterThan(0);
    }
    const text = renderText(res);
    expect(text).toContain("Run-shaped floor");
    expect(text).toMatch(
      /Run write ceiling: \d+ writes\/s \(20 Runs × create \+ 2 status patches, 3 in flight\)/,
    );
    expect(text).toMatch(/hotpath \(bash\): \d+\.\d+ Runs\/s = \d+% of the Run write ceiling ÷ 3/);
    const ratio =
      /hotpath \(bash\): complete p50 (\d+\.\d+)×, p95 (\d+\.\d+)× the Run-shaped floor at 3 in flight/.exec(
        text,
      );
    expect(ratio).not.toBeNull();
    // The printed ratios are the scenario's complete over the floor's at the same concurrency. (Not
    // bounded below: the floor and the scenario run at different moments of a shared machine, and
    // a busy moment under the floor has put the ratio at 0.5× here.)
    const floor3 = res.floors?.find((f) => f.concurrency === 3 && !f.oneAtATime);
    expect(Number(ratio?.[1])).toBeCloseTo((b?.stages.complete.p50 ?? 0) / (floor3?.complete.p50 ?? 1), 1);
    expect(Number(ratio?.[2])).toBeCloseTo((b?.stages.complete.p95 ?? 0) / (floor3?.complete.p95 ?? 1), 1);
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

  test("serial runs its Runs one at a time (none overlaps another) against the floor's chains one at a time", async () => {
    const args = ["bench", "-n", ns.name, "--scenario", "serial", "--runs", "5", "--pods", "1"];
    const r = await runKrt(bin, [...args, "--no-ceiling", "--jobs", "0", "-o", "json"], {
      kubeconfig: cluster?.kubeconfig ?? "",
    });
    if (r.code !== 0) throw new Error(`krt bench exited ${r.code}:\n${r.stderr}`);
    const res = JSON.parse(r.stdout) as BenchResult;
    const b = res.scenarios[0]?.breakdown;
    expect(b?.succeeded).toBe(5);
    // Created when the one before was seen ending: never two in the system at once.
    expect(b?.maxConcurrent).toBe(1);
    expect(b?.maxPending).toBeLessThanOrEqual(1);
    expect(res.floors?.map((f) => [f.concurrency, f.oneAtATime])).toEqual([[1, true]]);
    const text = renderText(res);
    expect(text).toContain("serial — bash, 5 Runs, one at a time, 1 pods × 64 slots, noop");
    expect(text).toMatch(
      /serial \(bash\): complete p50 \d+\.\d+×, p95 \d+\.\d+× the Run-shaped floor one at a time/,
    );
  }, 300_000);

  const namespaceGone = async (name: string) => {
    const got = await client
      .get<{ status?: { phase?: string } }>(path(R.namespaces, undefined, name))
      .catch(() => undefined);
    return got === undefined || got.status?.phase === "Terminating";
  };

  test("a Runtime that never gets ready is a clear error, and the namespace krt made is deleted", async () => {
    // No controller watches the namespace krt bench makes for itself.
    const r = await runKrt(
      bin,
      ["bench", "--ready-timeout", "2s", "--no-ceiling", "--no-floor", "--jobs", "0"],
      {
        kubeconfig: cluster?.kubeconfig ?? "",
      },
    );
    expect(r.code).toBe(75);
    expect(r.stderr).toContain("was not ready within 2s: 0 ready, 0 available of 2");
    expect(r.stderr).toContain("hint: is the kruntimes controller running");
    const made = /namespace (krt-bench-[a-z0-9]+)/.exec(r.stderr)?.[1] ?? "";
    expect(made).not.toBe("");
    expect(await namespaceGone(made)).toBe(true);
  }, 60_000);

  test("Ctrl-C cleans up and exits 130", async () => {
    const live = startKrt(bin, ["bench", "--no-ceiling", "--no-floor", "--jobs", "0"], {
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

// Through the chart's gateway: pod IPs are host addresses only on the local cluster.
const gatewaySuite = cluster?.local && runsExecute ? describe : describe.skip;

gatewaySuite("krt bench --scenario invoke|session (compiled binary, the chart's gateway)", () => {
  const client = cluster?.client as KubeClient;
  const kubeconfig = cluster?.kubeconfig ?? "";
  const RELEASE = "kb";
  const dir = mkdtempSync(join(tmpdir(), "krt-bench-gw-"));
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let bin = "";

  beforeAll(async () => {
    if (!helmPath()) throw new Error(HELM_MISSING);
    bin = await buildKrt();
    ns = await testNamespace(client, "krt-bench-gw");
    await installNamespaced(kubeconfig, client, RELEASE, ns.name);
  }, 300_000);
  afterAll(async () => {
    if (ns) await removeRelease(kubeconfig, client, RELEASE, ns.name);
  }, 180_000);

  /** What krt bench labels is all gone: Runs, and its caller ServiceAccount, Role and RoleBinding. */
  const nothingLeft = async () => {
    const live = async (p: string) =>
      (
        await client.list<{ metadata: { deletionTimestamp?: string } }>(p, {
          labelSelector: "kruntimes.io/bench",
        })
      ).items.filter((o) => !o.metadata.deletionTimestamp).length;
    await eventually(
      "krt bench's Runs gone",
      async () => (await live(path(RunResource, ns.name))) === 0,
      30_000,
    );
    expect(await live(path(R.serviceAccounts, ns.name))).toBe(0);
    expect(await live(path(R.roles, ns.name))).toBe(0);
    expect(await live(path(R.roleBindings, ns.name))).toBe(0);
  };

  test("invoke: every protocol × concurrency through the gateway, runtimed direct and the Bun floor, recorded", async () => {
    const r = await runKrt(
      bin,
      [
        "bench",
        "--scenario",
        "invoke",
        "-n",
        ns.name,
        "--gateway-namespace",
        ns.name,
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "--concurrency",
        "1,2",
        "-o",
        "json",
        "--record",
        dir,
      ],
      { kubeconfig },
    );
    if (r.code !== 0) throw new Error(`krt bench exited ${r.code}:\n${r.stderr}`);
    const res = JSON.parse(r.stdout) as InvokeResult;
    expect(res.scenario).toBe("invoke");
    expect(res.functions.map((f) => f.runtime)).toEqual(["python", "bash"]);
    for (const f of res.functions) expect(f.readyMs).toBeGreaterThan(0);
    // The admin may mint the gateway's dataplane token and reach pod IPs here: no row is skipped.
    expect(res.directSkipped).toBeUndefined();
    const targets = [
      "runtimed direct (connect-binary)",
      "gateway http",
      "gateway connect-json",
      "gateway connect-binary",
      "gateway grpc",
    ];
    const cells = res.rows.map((x) => `${x.runtime} ${x.target} ${x.concurrency}`).sort();
    const want = [1, 2].flatMap((c) => [
      `- floor: Bun echo (local) ${c}`,
      ...["python", "bash"].flatMap((rt) => targets.map((t) => `${rt} ${t} ${c}`)),
    ]);
    expect(cells).toEqual(want.sort());
    for (const x of res.rows) {
      expect({ cell: `${x.runtime} ${x.target}`, errors: x.errors }).toEqual({
        cell: `${x.runtime} ${x.target}`,
        errors: 0,
      });
      expect(x.calls).toBeGreaterThan(0);
      expect(x.p50).toBeGreaterThan(0);
      expect(x.p99).toBeGreaterThanOrEqual(x.p50);
      expect(x.rps).toBeGreaterThan(0);
    }
    expect(r.stderr).toContain("gateway: direct");
    expect(r.stderr).toContain(`deleting what krt bench made in ${ns.name}`);
    const base = join(dir, `krt-bench-invoke-${res.startedAt.slice(0, 10)}`);
    expect((JSON.parse(readFileSync(`${base}.json`, "utf8")) as InvokeResult).rows.length).toBe(
      res.rows.length,
    );
    expect(readFileSync(`${base}.md`, "utf8")).toContain("| python | gateway grpc | 2 |");
    await nothingLeft();
  }, 240_000);

  test("session: create → Ready with its writes, exec, files, a paged listing and task Runs, recorded", async () => {
    const r = await runKrt(
      bin,
      [
        "bench",
        "--scenario",
        "session",
        "-n",
        ns.name,
        "--gateway-namespace",
        ns.name,
        "--sessions",
        "2",
        "--execs",
        "5",
        "--list-entries",
        "250",
        "--page-size",
        "100",
        "-o",
        "json",
        "--record",
        dir,
      ],
      { kubeconfig },
    );
    if (r.code !== 0) throw new Error(`krt bench exited ${r.code}:\n${r.stderr}`);
    const res = JSON.parse(r.stdout) as SessionResult;
    expect(res.scenario).toBe("session");
    expect(res.sessions.length).toBe(2);
    expect(res.ready.n).toBe(2);
    expect(res.ready.p50).toBeGreaterThan(0);
    expect(res.readyWrites.p50).toBeGreaterThanOrEqual(1);
    expect(res.exec.n).toBe(5);
    expect(res.exec.p50).toBeGreaterThan(0);
    expect(res.files.map((f) => f.bytes)).toEqual([1024, 16 * 1024 * 1024]);
    for (const f of res.files) {
      expect(f.writeMs).toBeGreaterThan(0);
      expect(f.readMs).toBeGreaterThan(0);
    }
    expect(res.listing).toMatchObject({ entries: 250, pages: 3 });
    expect(res.tasks.length).toBe(2);
    expect(res.task.p50).toBeGreaterThan(0);
    expect(res.taskWrites.p50).toBeGreaterThanOrEqual(1);
    expect(existsSync(join(dir, `krt-bench-session-${res.startedAt.slice(0, 10)}.md`))).toBe(true);
    await nothingLeft();
  }, 240_000);

  test("bad gateway-scenario flags are usage errors", async () => {
    for (const args of [
      ["bench", "--scenario", "invoke", "--protocol", "smtp"],
      ["bench", "--scenario", "invoke", "--concurrency", "1,x"],
      ["bench", "--scenario", "invoke", "--duration", "soon"],
      ["bench", "--scenario", "session", "--runtime", "bash,python"],
      ["bench", "--scenario", "session", "--gateway-via", "pigeon"],
    ]) {
      const r = await runKrt(bin, args, { kubeconfig });
      expect({ args, code: r.code }).toEqual({ args, code: 64 });
    }
  });
});
