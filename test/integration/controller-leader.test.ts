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

/** PID of the local cluster's kube-apiserver (found by its secure port). */
function apiserverPid(): number {
  const port = new URL(cluster?.local?.server ?? "").port;
  const out = Bun.spawnSync(["pgrep", "-f", `kube-apiserver.*--secure-port=${port}( |$)`]).stdout.toString();
  const pid = Number(out.trim().split("\n")[0]);
  if (!pid) throw new Error(`no kube-apiserver process with --secure-port=${port}`);
  return pid;
}

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

  /**
   * The mechanism of a graceful handover: the stopping leader cleared the holder before it exited
   * and never took the Lease back; the standby acquired on the release event it watched for.
   */
  const expectHandover = (
    from: ControllerProcess,
    to: ControllerProcess,
    fromId: string,
    toId: string,
    history: { holder: string; transitions: number }[],
    transitionsBefore: number,
  ) => {
    expect(from.log()).toContain("released the leader Lease");
    const holders = history.map((h) => h.holder);
    const released = holders.indexOf("");
    expect(released).toBeGreaterThanOrEqual(0);
    expect(holders.indexOf(toId)).toBeGreaterThan(released);
    expect(holders.slice(released)).not.toContain(fromId);
    const toLog = to.log();
    expect(toLog).toContain("saw the leader Lease released");
    expect(toLog.indexOf("saw the leader Lease released")).toBeLessThan(toLog.indexOf("became leader"));
    expect(history.at(-1)?.holder).toBe(toId);
    expect(history.at(-1)?.transitions).toBe(transitionsBefore + 1);
  };

  /** Runs a graceful handover from `from` to a new standby; `during` may delay the stop. */
  const handOver = async (
    from: ControllerProcess,
    fromId: string,
    toId: string,
    stop: () => Promise<void>,
  ) => {
    const to = start(toId);
    await to.waitFor("caches synced");
    const lease = recordLease();
    await eventually(
      "the Lease watch delivered its current state",
      async () => lease.history.length > 0,
      30_000,
    );
    const transitionsBefore = (await client.get<Lease>(leasePath())).spec?.leaseTransitions ?? 0;
    await stop();
    expect(await from.exited).toBe(0);
    await to.waitFor(LEADING, 60_000);
    await eventually(
      `the Lease history shows ${toId}`,
      async () => lease.history.some((h) => h.holder === toId),
      30_000,
    );
    await lease.stop();
    expectHandover(from, to, fromId, toId, lease.history, transitionsBefore);
    return to;
  };

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
    await handOver(b, "ctl-b", "ctl-c", async () => b.kill("SIGTERM"));
    await createRuns(client, ns.name, [runManifest("under-c", "pool")]);
    await scheduled("under-c");
  });

  // The CI failure this guards against (5093 ms handover): SIGTERM landed while a renewal was in
  // flight; the release then conflicted with that renewal (or was undone by it) and the standby
  // had to wait for the Lease to expire. Pausing the apiserver holds a renewal in flight on purpose.
  test("graceful stop during a renewal in flight still releases the Lease", async () => {
    const c = procs[2] as ControllerProcess;
    const apiserver = apiserverPid();
    await handOver(c, "ctl-c", "ctl-d", async () => {
      process.kill(apiserver, "SIGSTOP");
      try {
        // Longer than the retry period (500ms): c's next renewal is now waiting on the apiserver.
        await Bun.sleep(700);
        c.kill("SIGTERM");
        await Bun.sleep(300);
      } finally {
        process.kill(apiserver, "SIGCONT");
      }
    });
    await createRuns(client, ns.name, [runManifest("under-d", "pool")]);
    await scheduled("under-d");
  });
});
