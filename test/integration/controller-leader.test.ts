/**
 * One active controller: two processes share a leader Lease; only the leader schedules. When the
 * leader is SIGKILLed the standby takes over after the lease duration; when it is stopped
 * gracefully it releases the Lease and the standby, watching the Lease, acquires on the release
 * event. The tests prove the mechanism from the Lease's own history, never from wall-clock speed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type KubeClient, path, R, watchStream } from "@kruntimes/kube";
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
  const leasePath = () => path(R.leases, ns.name, "kruntimes-controller");
  const holder = async () => (await client.get<Lease>(leasePath())).spec?.holderIdentity;
  /** Records every version of the Lease from now on: holder and transitions, in order. */
  const recordLease = () => {
    const abort = new AbortController();
    const history: { holder: string; transitions: number }[] = [];
    const done = (async () => {
      const query = { fieldSelector: "metadata.name=kruntimes-controller" };
      try {
        for await (const ev of watchStream<Lease>(client, path(R.leases, ns.name), query, abort.signal)) {
          if (ev.type === "BOOKMARK") continue;
          history.push({
            holder: ev.object.spec?.holderIdentity ?? "",
            transitions: ev.object.spec?.leaseTransitions ?? 0,
          });
        }
      } catch (e) {
        if (!abort.signal.aborted) throw e;
      }
    })();
    return {
      history,
      async stop() {
        abort.abort();
        await done;
      },
    };
  };
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
    // b stands by while a keeps renewing: wait for two renewals by a after b is up (state, not
    // time), then b must still not lead.
    const renewTime = async () => (await client.get<Lease>(leasePath())).spec?.renewTime;
    let renewals = 0;
    let last = await renewTime();
    await eventually(
      "two renewals by ctl-a while ctl-b stands by",
      async () => {
        const now = await renewTime();
        if (now !== last) {
          renewals++;
          last = now;
        }
        return renewals >= 2;
      },
      30_000,
    );
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
    await b.waitFor(LEADING, 60_000);
    // Safety, not speed: the standby must not take a Lease whose holder might still be alive
    // before the lease duration (4s) passed. A slow machine can only make this longer.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3000);
    expect(await holder()).toBe("ctl-b");
    await createRuns(client, ns.name, [runManifest("under-b", "pool")]);
    await scheduled("under-b");
  });

  test("graceful stop releases the Lease: the standby acquires on the release event", async () => {
    const b = procs[1] as ControllerProcess;
    const c = start("ctl-c");
    await c.waitFor("caches synced");
    const lease = recordLease();
    await eventually("the Lease watch delivered its current state", async () => lease.history.length > 0, 30_000);
    const transitionsBefore = (await client.get<Lease>(leasePath())).spec?.leaseTransitions ?? 0;
    b.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    await c.waitFor(LEADING, 60_000);
    await eventually(
      "the Lease history shows ctl-c",
      async () => lease.history.some((h) => h.holder === "ctl-c"),
      30_000,
    );
    await lease.stop();
    // The stopping leader cleared the holder before it exited, and never took the Lease back.
    expect(b.log()).toContain("released the leader Lease");
    const holders = lease.history.map((h) => h.holder);
    const released = holders.indexOf("");
    const acquired = holders.indexOf("ctl-c");
    expect(released).toBeGreaterThanOrEqual(0);
    expect(acquired).toBeGreaterThan(released);
    expect(holders.slice(released)).not.toContain("ctl-b");
    // The standby acted on the release event (its Lease watch), not on the lease expiring.
    const cLog = c.log();
    expect(cLog).toContain("saw the leader Lease released");
    expect(cLog.indexOf("saw the leader Lease released")).toBeLessThan(cLog.indexOf("became leader"));
    const final = lease.history.at(-1);
    expect(final?.holder).toBe("ctl-c");
    expect(final?.transitions).toBe(transitionsBefore + 1);
    await createRuns(client, ns.name, [runManifest("under-c", "pool")]);
    await scheduled("under-c");
  });
});
