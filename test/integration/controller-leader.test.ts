/**
 * One active controller: two processes share a leader Lease; only the leader schedules. When the
 * leader is SIGKILLed the standby takes over after the lease duration; when it is stopped
 * gracefully it releases the Lease and the standby takes over at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { Lease } from "../../controller/kube-types.ts";
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
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;
const LEADING = "scheduling and reconciling";

suite("controller: leader election", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  const procs: ControllerProcess[] = [];
  const start = (id: string) => {
    const p = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      flags: [`--identity=${id}`],
    });
    procs.push(p);
    return p;
  };
  const holder = async () =>
    (await client.get<Lease>(path(R.leases, ns.name, "kruntimes-controller"))).spec?.holderIdentity;
  const scheduled = (name: string) =>
    eventually(
      `${name} Scheduled`,
      async () => (await getRun(client, ns.name, name)).status?.phase === "Scheduled",
      30_000,
    );

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-ctl-leader");
  });

  afterAll(async () => {
    for (const p of procs) p.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await ns?.remove();
  });

  test("the first process leads, the second stands by with warm caches", async () => {
    const a = start("ctl-a");
    await a.waitFor(LEADING);
    const b = start("ctl-b");
    await b.waitFor("caches synced");
    await Bun.sleep(2000);
    expect(b.log()).not.toContain(LEADING);
    expect(await holder()).toBe("ctl-a");
    await createRuntime(client, ns.name, runtimeManifest("pool", { replicas: 1 }));
    await eventually(
      "available",
      async () => (await getRuntime(client, ns.name, "pool")).status?.availableReplicas === 1,
      60_000,
    );
    await createRuns(client, ns.name, [runManifest("under-a", "pool")]);
    await scheduled("under-a");
  });

  test("SIGKILL of the leader: the standby takes over after the lease duration and schedules", async () => {
    const [a, b] = procs as [ControllerProcess, ControllerProcess];
    const t0 = Date.now();
    a.kill("SIGKILL");
    await a.exited;
    await b.waitFor(LEADING, 15_000);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(3000);
    expect(await holder()).toBe("ctl-b");
    await createRuns(client, ns.name, [runManifest("under-b", "pool")]);
    await scheduled("under-b");
  });

  test("graceful stop releases the Lease: the next standby takes over at once", async () => {
    const b = procs[1] as ControllerProcess;
    const c = start("ctl-c");
    await c.waitFor("caches synced");
    const t0 = Date.now();
    b.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    await c.waitFor(LEADING, 10_000);
    expect(Date.now() - t0).toBeLessThan(3000);
    await createRuns(client, ns.name, [runManifest("under-c", "pool")]);
    await scheduled("under-c");
  });
});
