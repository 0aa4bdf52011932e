/**
 * Run affinity on the real control plane (the controller as a process, the heartbeat stand-in as
 * runtimed, the test finishing Runs as runtimed would): a cohort created at once shares a pod
 * while its binds are still assumed; a Run that cannot seed its cohort waits Unschedulable with
 * the term named and is placed beside the first matching Run; anti-affinity keeps Runs apart
 * and a release wakes the one that waited; a cohort whose pod is full waits for a release on that
 * pod; preferred terms and the symmetry of anti-affinity; the docs' example; a controller killed with SIGKILL
 * between assume and bind, and a new one that relists, keep every cohort on one pod.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Affinity, type Run, TopologyKeys } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
import YAML from "yaml";
import { writeAsRuntimed } from "../../controller/testing/cluster/act-as-runtimed.ts";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import {
  createRuns,
  createRuntime,
  getRun,
  getRuntime,
  installCrds,
  runManifest,
  runtimeManifest,
} from "../../controller/testing/cluster/objects.ts";
import { RunWatcher } from "../../controller/testing/cluster/run-watcher.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

const term = (matchLabels: Record<string, string>) => ({
  labelSelector: { matchLabels },
  topologyKey: TopologyKeys.runtimePod,
});
const together = (labels: Record<string, string>): Affinity => ({
  runAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] },
});
const apart = (labels: Record<string, string>): Affinity => ({
  runAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] },
});

/** pool: 3 pods × 12; small: 2 pods × 2 (to fill a pod with a few Runs). */
const CAPACITY: Record<string, number> = { pool: 12, small: 2 };

function labelled(name: string, runtime: string, labels: Record<string, string>, affinity?: Affinity): Run {
  const m = runManifest(name, runtime, affinity ? { affinity } : {});
  m.metadata.labels = labels;
  return m;
}

suite("scheduler: Run affinity", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let watcher: RunWatcher;
  const controllers: ControllerProcess[] = [];
  const start = () => {
    const c = startController({ namespace: ns.name, kubeconfig: cluster?.kubeconfig as string });
    controllers.push(c);
    return c;
  };

  const run = (name: string) => getRun(client, ns.name, name);
  const podOf = async (name: string) => (await run(name)).status?.assignment?.pod;
  const scheduled = (names: string[], ms = 60_000) =>
    eventually(
      `${names.join(", ")} Scheduled`,
      async () => {
        const rs = await Promise.all(names.map(run));
        return rs.every((r) => r.status?.phase === "Scheduled") ? rs : undefined;
      },
      ms,
    );
  const finish = async (names: string[]) => {
    for (const n of names) {
      const r = await run(n);
      if (r.status?.phase === "Scheduled") await writeAsRuntimed(client, r, "Succeeded");
    }
  };
  const waiting = (name: string, reason: string) =>
    eventually(`${name} waiting with ${reason}`, async () => {
      const r = await run(name);
      return r.status?.waitingReason === reason ? r : undefined;
    });

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-sched-affinity");
    watcher = await new RunWatcher(
      client,
      ns.name,
      (pod) => CAPACITY[pod.split("-")[0] as string] ?? 0,
    ).start();
    await start().waitFor("scheduling and reconciling");
    await createRuntime(
      client,
      ns.name,
      runtimeManifest("pool", { replicas: 3, capacity: { runs: CAPACITY.pool as number } }),
    );
    await createRuntime(
      client,
      ns.name,
      runtimeManifest("small", { replicas: 2, capacity: { runs: CAPACITY.small as number } }),
    );
    for (const [name, n] of [
      ["pool", 3],
      ["small", 2],
    ] as const) {
      await eventually(
        `${name}: ${n} pods available`,
        async () => (await getRuntime(client, ns.name, name)).status?.availableReplicas === n,
        90_000,
      );
    }
  });

  afterAll(async () => {
    watcher?.stop();
    for (const c of controllers) c.kill("SIGKILL");
    await Promise.all(controllers.map((c) => c.exited));
    await ns?.remove();
  });

  test("a cohort created at once lands on one pod (its first Run seeds it; assumed binds count)", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `cohort-${i}`);
    await createRuns(
      client,
      ns.name,
      names.map((n) => labelled(n, "pool", { job: "a" }, together({ job: "a" }))),
      6,
    );
    const rs = await scheduled(names);
    expect(new Set(rs.map((r) => r.status?.assignment?.pod)).size).toBe(1);
    await finish(names);
  });

  test("a Run that cannot seed waits Unschedulable, naming the term; the first matching Run brings it", async () => {
    await createRuns(client, ns.name, [
      labelled("follower", "pool", { role: "follower" }, together({ job: "b" })),
    ]);
    const w = await waiting("follower", "Unschedulable");
    expect(w.status?.phase).toBe("Pending");
    expect(w.status?.message).toStartWith("waiting for a Run matching job=b on the same pod");
    expect(w.status?.conditions?.find((c) => c.type === "Scheduled")?.reason).toBe("Unschedulable");
    await createRuns(client, ns.name, [labelled("leader", "pool", { job: "b" })]);
    await scheduled(["leader", "follower"]);
    expect(await podOf("follower")).toBe((await podOf("leader")) as string);
    await finish(["leader", "follower"]);
  });

  test("required anti-affinity: one per pod, the fourth waits; a Run ending frees its pod for it", async () => {
    const names = ["web-0", "web-1", "web-2", "web-3"];
    await createRuns(
      client,
      ns.name,
      names.map((n) => labelled(n, "pool", { app: "web" }, apart({ app: "web" }))),
    );
    const placed = await eventually("3 web Runs Scheduled", async () => {
      const rs = await Promise.all(names.map(run));
      const s = rs.filter((r) => r.status?.phase === "Scheduled");
      return s.length === 3 ? s : undefined;
    });
    expect(new Set(placed.map((r) => r.status?.assignment?.pod)).size).toBe(3);
    const extra = names.find((n) => !placed.some((r) => r.metadata.name === n)) as string;
    const w = await waiting(extra, "Unschedulable");
    expect(w.status?.message).toBe(
      "waiting for a pod without a Run matching app=web (0/3 pods can take the Run: 3 with a Run matching app=web (runAntiAffinity))",
    );
    const done = placed[0] as Run;
    await writeAsRuntimed(client, done, "Succeeded");
    await scheduled([extra]);
    expect(await podOf(extra)).toBe(done.status?.assignment?.pod as string);
    await finish(names);
  });

  test("the cohort's pod full: InsufficientCapacity; a release elsewhere does not help, one there does", async () => {
    await createRuns(client, ns.name, [labelled("s-lead", "small", { job: "c" })]);
    const [lead] = await scheduled(["s-lead"]);
    const cohortPod = lead?.status?.assignment?.pod as string;
    await createRuns(client, ns.name, [labelled("s-mate", "small", { job: "c" }, together({ job: "c" }))]);
    await scheduled(["s-mate"]);
    expect(await podOf("s-mate")).toBe(cohortPod);
    // The other pod gets a Run too; then the follower finds its cohort's pod full.
    await createRuns(client, ns.name, [labelled("s-other", "small", { x: "1" })]);
    await scheduled(["s-other"]);
    expect(await podOf("s-other")).not.toBe(cohortPod);
    await createRuns(client, ns.name, [labelled("s-late", "small", {}, together({ job: "c" }))]);
    const w = await waiting("s-late", "InsufficientCapacity");
    expect(w.status?.message).toBe(
      "0/2 pods can take the Run: 1 insufficient runs, 1 without a Run matching job=c",
    );
    await finish(["s-other"]);
    await Bun.sleep(1500);
    expect((await run("s-late")).status?.phase).toBe("Pending");
    await finish(["s-mate"]);
    await scheduled(["s-late"]);
    expect(await podOf("s-late")).toBe(cohortPod);
    await finish(["s-lead", "s-late"]);
  });

  test("preferred affinity joins the warm pod; a placed Run's anti-affinity keeps matching Runs away", async () => {
    await createRuns(client, ns.name, [
      labelled("warm", "pool", { cache: "warm" }),
      labelled("db", "pool", { tier: "db" }, apart({ tier: "db" })),
    ]);
    await scheduled(["warm", "db"]);
    const prefer: Affinity = {
      runAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, runAffinityTerm: term({ cache: "warm" }) },
        ],
      },
    };
    const dbs = ["db-0", "db-1", "db-2"];
    await createRuns(client, ns.name, [
      labelled("likes-warm", "pool", {}, prefer),
      ...dbs.map((n) => labelled(n, "pool", { tier: "db" })),
    ]);
    await scheduled(["likes-warm", ...dbs]);
    expect(await podOf("likes-warm")).toBe((await podOf("warm")) as string);
    const dbPod = await podOf("db");
    for (const n of dbs) expect(await podOf(n)).not.toBe(dbPod as string);
    await finish(["warm", "db", "likes-warm", ...dbs]);
  });

  test("the example of docs/concepts/affinity.md is a valid Run and is placed as it says", async () => {
    const doc = readFileSync(join(import.meta.dir, "../../docs/concepts/affinity.md"), "utf8");
    const example = YAML.parse(/```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? "") as Run;
    expect(example.spec.affinity?.runAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toHaveLength(
      1,
    );
    example.spec.runtime = "pool";
    // It names the only Run of its job: it seeds the cohort (it matches its own term).
    await createRuns(client, ns.name, [example]);
    await scheduled([example.metadata.name as string]);
    await finish([example.metadata.name as string]);
  });

  test("SIGKILL between assume and bind, a new leader relists: every cohort stays on one pod, each Run bound once", async () => {
    // 6 cohorts of 4; the second half of each cohort is created only after the kill, so the new
    // leader must find the first half (bound, or never bound) from what it lists.
    const cohorts = Array.from({ length: 6 }, (_, c) => `k${c}`);
    const manifest = (c: string, i: number) =>
      labelled(`${c}-${i}`, "pool", { cohort: c }, together({ cohort: c }));
    const firstHalf = cohorts.flatMap((c) => [manifest(c, 0), manifest(c, 1)]);
    const secondHalf = cohorts.flatMap((c) => [manifest(c, 2), manifest(c, 3)]);
    const first = controllers[0] as ControllerProcess;
    const creating = createRuns(client, ns.name, firstHalf, 12);
    await eventually(
      "the first binds",
      async () => watcher.runs().filter((r) => r.metadata.labels?.cohort && r.status?.assignment).length >= 2,
      60_000,
    );
    first.kill("SIGKILL");
    await first.exited;
    await creating;
    const boundAtKill = watcher
      .runs()
      .filter((r) => r.metadata.labels?.cohort && r.status?.assignment).length;
    await createRuns(client, ns.name, secondHalf, 12);
    const second = start();
    await second.waitFor("scheduling and reconciling", 30_000);
    const all = [...firstHalf, ...secondHalf].map((m) => m.metadata.name as string);
    const rs = await scheduled(all, 120_000);
    console.log(`affinity crash: ${boundAtKill}/12 of the first half bound when killed`);
    // The watcher's informer may trail the GETs above by a moment.
    await eventually("the watcher saw every bind", async () => all.every((n) => watcher.binds.has(n)));
    const placement = (r: Run) => `${r.metadata.name}@${r.status?.assignment?.pod}`;
    const split = cohorts
      .map((c) => rs.filter((r) => r.metadata.labels?.cohort === c))
      .filter((members) => new Set(members.map((r) => r.status?.assignment?.pod)).size !== 1)
      .map((members) => members.map(placement).join(" "));
    expect(split).toEqual([]);
    expect(watcher.violations).toEqual([]);
    const rebound = all
      .filter((n) => watcher.binds.get(n)?.length !== 1)
      .map((n) => `${n}: ${watcher.binds.get(n)}`);
    expect(rebound).toEqual([]);
    expect(rs.filter((r) => r.status?.attempt !== 1).map(placement)).toEqual([]);
    await finish(all);
  });
});
