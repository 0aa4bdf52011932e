/**
 * Across nodes (a local cluster started with `--nodes 2` or more; skipped on one node): a Runtime's
 * two replicas land on two nodes (a hard topology spread, as a user would ask for), one Run runs
 * on each node at once with the real runtimed, and when one node's agent is SIGKILLed — every
 * process of its pods dies, as when a machine is lost — the Run that was there is retried on the
 * other node and succeeds there, while the other node's Run is untouched. The node comes back
 * afterwards and its agent restarts the pod.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { isTerminalPhase, type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import type { LocalNode } from "../localcluster/nodes.ts";
import type { ClusterInfo } from "../localcluster/supervisor.ts";
import { controlComponent, eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const nodes = cluster?.local?.nodes ?? [];
// Needs the local cluster (it stops a node agent) with at least two nodes.
const suite = nodes.length >= 2 ? describe : describe.skip;

setDefaultTimeout(180_000);

interface PodLike {
  metadata: { name: string };
  spec?: { nodeName?: string };
  status?: { containerStatuses?: { restartCount: number }[] };
}

suite("several nodes: spread, a Run on each, a node's pods lost", () => {
  const client = cluster?.client as KubeClient;
  const local = cluster?.local as ClusterInfo;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  /** The node whose agent the test stopped (until it starts it again). */
  let stopped: LocalNode | undefined;

  const agentState = async (component: string) => {
    const res = await fetch("http://localhost/status", { unix: local.controlSocket } as RequestInit);
    return ((await res.json()) as Record<string, { pid: number; running: boolean }>)[component] as {
      pid: number;
      running: boolean;
    };
  };
  const getRun = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const nodeOf = async (pod: string) =>
    (await client.get<PodLike>(path(R.pods, ns.name, pod))).spec?.nodeName as string;
  const until = (name: string, what: string, ok: (r: Run) => boolean, ms = 90_000) =>
    eventually(
      `${name}: ${what}`,
      async () => {
        const r = await getRun(name);
        return ok(r) ? r : undefined;
      },
      ms,
    );

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-multi-node");
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
      flags: ["--heartbeat-lease-duration=3s", "--heartbeat-interval=1s", "--heartbeat-stale-after=5s"],
    });
    await ctl.waitFor("scheduling and reconciling");
    await client.create<Runtime>(path(RuntimeResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Runtime",
      metadata: { name: "spread" },
      spec: {
        replicas: 2,
        // One Run per pod: two Runs at once must use both pods, so both nodes.
        capacity: { runs: 1 },
        template: {
          spec: {
            terminationGracePeriodSeconds: 2,
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: "kubernetes.io/hostname",
                whenUnsatisfiable: "DoNotSchedule",
                labelSelector: { matchLabels: { "kruntimes.io/runtime": "spread" } },
              },
            ],
            containers: [{ name: "runtime", image: "ghcr.io/kruntimes/bash" }],
          },
        },
      },
    } as Runtime);
  }, 90_000);

  afterAll(async () => {
    // Whatever happened, leave the node running for the suites after this one.
    if (stopped) await controlComponent(local, stopped.component, "start");
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  }, 60_000);

  test("the two replicas are on two nodes", async () => {
    const pods = await eventually(
      "2 ready pods",
      async () => {
        const p = await readyPods(client, ns.name, "spread");
        return p.length === 2 ? p : undefined;
      },
      120_000,
    );
    const on = new Set(pods.map((p) => p.spec?.nodeName));
    expect(on.size).toBe(2);
    for (const n of on) expect(nodes.map((x) => x.name)).toContain(n as string);
  });

  test("a Run on each node; the lost node's Run is retried on the other node and succeeds", async () => {
    const create = (name: string, inline: string, retries: boolean) =>
      client.create<Run>(path(RunResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Run",
        metadata: { name },
        spec: {
          runtime: "spread",
          mode: { task: {} },
          source: { inline },
          ...(retries ? { retryPolicy: { maxAttempts: 2 } } : {}),
        },
      } as Run);
    await create("a", "sleep 6; echo a-done", false);
    // Attempt 1 never ends by itself: only a retry elsewhere can make b succeed.
    await create("b", 'if [ "$KRUNTIME_ATTEMPT" = 1 ]; then sleep 600; fi; echo b-done', true);
    const a = await until("a", "Running", (r) => r.status?.phase === "Running");
    const b = await until("b", "Running", (r) => r.status?.phase === "Running");
    const nodeA = await nodeOf(a.status?.assignment?.pod as string);
    const nodeB = await nodeOf(b.status?.assignment?.pod as string);
    expect(nodeA).not.toBe(nodeB);

    // Lose the node b runs on, as when a machine dies: its agent is SIGKILLed and its pods'
    // processes die with it (pdeathsig); nothing on that node writes another word.
    stopped = nodes.find((n) => n.name === nodeB) as LocalNode;
    const victim = stopped;
    process.kill((await agentState(victim.component)).pid, "SIGKILL");
    await eventually(
      "the supervisor saw the agent die",
      async () => !(await agentState(victim.component)).running,
    );

    const aDone = await until("a", "terminal", (r) => isTerminalPhase(r.status?.phase));
    expect(aDone.status?.phase).toBe("Succeeded");
    expect(aDone.status?.attempt ?? 1).toBe(1);

    const bDone = await until("b", "terminal after a retry", (r) => isTerminalPhase(r.status?.phase));
    expect(`${bDone.status?.phase}/${bDone.status?.reason ?? ""}`).toMatch(/^Succeeded/);
    expect(bDone.status?.attempt).toBe(2);
    expect(await nodeOf(bDone.status?.assignment?.pod as string)).toBe(nodeA);
  });

  test("the lost node comes back: its agent restarts the pod's containers and the pod is Ready", async () => {
    const node = stopped;
    if (!node) throw new Error("no node was stopped by the test before");
    await controlComponent(local, node.component, "start");
    stopped = undefined;
    await eventually(
      `the pod on ${node.name} restarted and Ready`,
      async () => {
        const pods = await readyPods(client, ns.name, "spread");
        const there = pods.find((p) => p.spec?.nodeName === node.name) as PodLike | undefined;
        const restarts = there?.status?.containerStatuses?.map((c) => c.restartCount) ?? [];
        return pods.length === 2 && restarts.length > 0 && restarts.every((n) => n >= 1);
      },
      120_000,
    );
  });
});
