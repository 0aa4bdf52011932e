/**
 * The scheduler on the real control plane: one fenced status patch binds a Run to an available
 * pod (Ready, heartbeating), full pools park Runs with a waiting reason and a release wakes one,
 * unsupported modes fail, missing Runtimes wait, and the bind fence holds against a racing binder.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Annotations, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import { ApiBinder } from "../../controller/scheduler/bind/binder.ts";
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
  heartbeatControl,
  installCrds,
  readyPods,
  runManifest,
  runtimeManifest,
} from "../../controller/testing/cluster/objects.ts";
import { systemClock } from "../../controller/util/clock.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

suite("scheduler: placement", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;

  const run = (name: string) => getRun(client, ns.name, name);
  const phaseOf = async (name: string) => (await run(name)).status?.phase;
  const waitPhase = (name: string, phase: string, ms = 60_000) =>
    eventually(
      `${name} ${phase}`,
      async () => ((await run(name)).status?.phase === phase ? run(name) : undefined),
      ms,
    );
  const available = async (n: number) =>
    eventually(
      `${n} pods available`,
      async () => (await getRuntime(client, ns.name, "pool")).status?.availableReplicas === n,
      60_000,
    );
  const finishAll = async (names: string[]) => {
    for (const n of names) {
      const r = await run(n);
      if (r.status?.phase === "Scheduled") await writeAsRuntimed(client, r, "Succeeded");
    }
  };

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-sched-place");
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      // A paused heartbeat goes stale in 3 s instead of 10 s.
      flags: ["--heartbeat-lease-duration=3s", "--heartbeat-stale-after=5s", "--heartbeat-interval=1s"],
    });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, runtimeManifest("pool", { replicas: 3, capacity: { runs: 2 } }));
    await available(3);
  });

  afterAll(async () => {
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  });

  test("binds with one fenced patch: Scheduled, assignment, attempt 1, timing, Scheduled condition", async () => {
    const created = Date.now() * 1000;
    const m = runManifest("first", "pool");
    m.metadata.annotations = { [Annotations.createdMicros]: String(created) };
    await client.create(path(RunResource, ns.name), m);
    const r = await waitPhase("first", "Scheduled");
    const pods = await readyPods(client, ns.name, "pool");
    const pod = pods.find((p) => p.metadata.name === r.status?.assignment?.pod);
    expect(pod).toBeDefined();
    expect(r.status?.assignment).toEqual({
      pod: pod?.metadata.name as string,
      podUID: pod?.metadata.uid as string,
      attempt: 1,
      node: pod?.spec?.nodeName as string,
    });
    expect(r.status?.attempt).toBe(1);
    expect(r.status?.timing?.createdMicros).toBe(created);
    expect(r.status?.timing?.scheduledMicros).toBeGreaterThan(created);
    expect(r.status?.conditions?.find((c) => c.type === "Scheduled")?.status).toBe("True");
    expect(r.status?.waitingReason).toBeUndefined();
    await finishAll(["first"]);
  });

  test("only available pods get Runs: not one that is unready, not one whose heartbeat stopped", async () => {
    const [a, b, c] = await readyPods(client, ns.name, "pool");
    if (!a || !b || !c) throw new Error("need 3 pods");
    await heartbeatControl(a, "unready");
    await heartbeatControl(b, "pause");
    try {
      await available(1);
      await createRuns(client, ns.name, [runManifest("only-1", "pool"), runManifest("only-2", "pool")]);
      for (const n of ["only-1", "only-2"]) {
        expect((await waitPhase(n, "Scheduled")).status?.assignment?.pod).toBe(c.metadata.name as string);
      }
      await createRuns(client, ns.name, [runManifest("only-3", "pool")]);
      const waiting = await eventually("only-3 waiting with InsufficientCapacity", async () => {
        const r = await run("only-3");
        return r.status?.waitingReason === "InsufficientCapacity" ? r : undefined;
      });
      expect(waiting.status?.phase).toBe("Pending");
      expect(waiting.status?.message).toContain("0/3 pods can take the Run");
    } finally {
      await heartbeatControl(a, "ready");
      await heartbeatControl(b, "resume");
    }
    // A pod becoming available again wakes the parked Run.
    const woken = await waitPhase("only-3", "Scheduled");
    expect([a.metadata.name, b.metadata.name]).toContain(woken.status?.assignment?.pod as string);
    await finishAll(["only-1", "only-2", "only-3"]);
  });

  test("a full pool parks Runs with InsufficientCapacity; one release wakes one Run", async () => {
    await available(3);
    const names = Array.from({ length: 8 }, (_, i) => `full-${i}`);
    await createRuns(
      client,
      ns.name,
      names.map((n) => runManifest(n, "pool")),
    );
    await eventually("6 Scheduled, 2 waiting", async () => {
      const rs = await Promise.all(names.map(run));
      const scheduled = rs.filter((r) => r.status?.phase === "Scheduled").length;
      const waiting = rs.filter((r) => r.status?.waitingReason === "InsufficientCapacity").length;
      return scheduled === 6 && waiting === 2;
    });
    // The Runtime says how many wait for it (refreshed within ~2 s of the change).
    const pending = async (n: number) =>
      eventually(
        `the Runtime's status.pendingRuns ${n}`,
        async () => (await getRuntime(client, ns.name, "pool")).status?.pendingRuns === n,
        15_000,
      );
    await pending(2);
    const bound = (await Promise.all(names.map(run))).find((r) => r.status?.phase === "Scheduled") as Run;
    await writeAsRuntimed(client, bound, "Succeeded");
    await eventually("7 Scheduled or Succeeded, 1 still waiting", async () => {
      const rs = await Promise.all(names.map(run));
      return (
        rs.filter((r) => r.status?.phase === "Scheduled").length === 6 &&
        rs.filter((r) => r.status?.phase === "Pending").length === 1
      );
    });
    await pending(1);
    await eventually("all done (finishing each Run as it gets bound)", async () => {
      await finishAll(names);
      return (await Promise.all(names.map(phaseOf))).every((p) => p === "Succeeded");
    });
    await pending(0);
  });

  test("function and session Runs are placed like tasks: Scheduled on a pod with an assignment", async () => {
    await createRuns(client, ns.name, [
      runManifest("fn", "pool", {
        mode: { function: {} },
        source: { inline: "def handler(request):\n    return 'ok'\n" },
      }),
      runManifest("sess", "pool", { mode: { session: {} } }),
    ]);
    for (const n of ["fn", "sess"]) {
      const r = await waitPhase(n, "Scheduled");
      expect(r.status?.assignment?.pod).toBeTruthy();
      expect(r.status?.assignment?.attempt).toBe(1);
    }
    // A session holds its pod alone: it is never bound to the pod the function holds.
    const [fn, sess] = await Promise.all([run("fn"), run("sess")]);
    expect(sess.status?.assignment?.pod).not.toBe(fn.status?.assignment?.pod);
  });

  test("a Run for a missing Runtime waits with RuntimeNotFound, and runs once the Runtime exists", async () => {
    await createRuns(client, ns.name, [runManifest("later", "later")]);
    const r = await eventually("RuntimeNotFound", async () => {
      const x = await run("later");
      return x.status?.waitingReason === "RuntimeNotFound" ? x : undefined;
    });
    expect(r.status?.phase).toBe("Pending");
    expect(r.status?.message).toStartWith(`Runtime "later" not found in namespace "${ns.name}": create it`);
    await createRuntime(client, ns.name, runtimeManifest("later", { replicas: 1 }));
    const bound = await waitPhase("later", "Scheduled", 60_000);
    expect(bound.status?.assignment?.pod).toStartWith("later-");
  });

  test("a Pending Run that is cancelled ends Cancelled without a pod", async () => {
    await createRuns(client, ns.name, [runManifest("cancel-me", "nowhere")]);
    await eventually(
      "waiting",
      async () => (await run("cancel-me")).status?.waitingReason === "RuntimeNotFound",
    );
    await client.patch(
      path(RunResource, ns.name, "cancel-me"),
      { spec: { termination: { mode: "Immediate" } } },
      "merge",
    );
    const r = await waitPhase("cancel-me", "Cancelled");
    expect(r.status?.reason).toBe("Cancelled");
  });

  test("the bind fence holds on the real apiserver: of two racing binds exactly one wins", async () => {
    await createRuns(client, ns.name, [runManifest("race", "nowhere")]);
    const observed = await eventually("race waiting", async () => {
      const x = await run("race");
      return x.status?.waitingReason === "RuntimeNotFound" ? x : undefined;
    });
    const binder = new ApiBinder(client, systemClock);
    const target = (pod: string) => ({ pod, podUID: `uid-${pod}`, node: "n" });
    const outcomes = await Promise.all([
      binder.bind(observed, target("x"), 1),
      binder.bind(observed, target("y"), 1),
    ]);
    expect(outcomes.map((o) => o.kind).sort()).toEqual(["bound", "fenced"]);
    // A bind decided on the pre-bind state fails too, now that the Run is Scheduled.
    expect((await binder.bind(observed, target("z"), 1)).kind).toBe("fenced");
    expect(["x", "y"]).toContain((await run("race")).status?.assignment?.pod as string);
  });
});
