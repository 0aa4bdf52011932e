/**
 * TTL garbage collection on the real control plane: finished Runs with ttlSecondsAfterFinished
 * are deleted that long after they finished, unfinished ones and ones without a TTL are kept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
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
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

suite("controller: TTL after finished", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  const gone = (name: string) =>
    getRun(client, ns.name, name).then(
      () => false,
      () => true,
    );

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-ctl-ttl");
    ctl = startController({ namespace: ns.name, kubeconfig: cluster?.kubeconfig as string });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, runtimeManifest("pool", { replicas: 1 }));
    await eventually(
      "pool available",
      async () => (await getRuntime(client, ns.name, "pool")).status?.availableReplicas === 1,
      60_000,
    );
  });

  afterAll(async () => {
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  });

  test("a finished Run is deleted ttlSecondsAfterFinished after it finished, not before", async () => {
    await createRuns(client, ns.name, [
      runManifest("ttl", "pool", { ttlSecondsAfterFinished: 3 }),
      runManifest("keep", "pool"),
      runManifest("running", "pool", { ttlSecondsAfterFinished: 1 }),
    ]);
    const bound = await eventually("bound", async () => {
      const rs = await Promise.all(["ttl", "keep", "running"].map((n) => getRun(client, ns.name, n)));
      return rs.every((r) => r.status?.phase === "Scheduled") ? rs : undefined;
    });
    const [ttl, keep, running] = bound as [(typeof bound)[0], (typeof bound)[0], (typeof bound)[0]];
    await writeAsRuntimed(client, ttl, "Succeeded");
    await writeAsRuntimed(client, keep, "Failed");
    await writeAsRuntimed(client, running, "Running");
    // "Not before": every read that still finds ttl is fine; the first read that finds it gone
    // must have come back at least 3 s after the finish time runtimed wrote (same host clock).
    // A slow machine only reads later, so it cannot fail this; an early delete always does.
    const finishedMs = ((await getRun(client, ns.name, "ttl")).status?.timing?.finishedMicros ?? 0) / 1000;
    expect(finishedMs).toBeGreaterThan(0);
    const goneSeenAt = await eventually(
      "ttl deleted",
      async () => ((await gone("ttl")) ? Date.now() : undefined),
      60_000,
    );
    expect(goneSeenAt - finishedMs).toBeGreaterThanOrEqual(3000);
    // ttl's delete was due after running's would have been (1 s): by now neither other is touched.
    expect(await gone("keep")).toBe(false);
    expect(await gone("running")).toBe(false);
  });

  test("a Run cancelled before it ever ran is collected too", async () => {
    // No such Runtime: the Run waits Pending (RuntimeNotFound) until it is cancelled.
    await createRuns(client, ns.name, [
      runManifest("never-ran", "no-such-runtime", { ttlSecondsAfterFinished: 1 }),
    ]);
    await eventually(
      "never-ran Pending",
      async () => (await getRun(client, ns.name, "never-ran")).status?.phase === "Pending",
    );
    await client.patch(
      path(RunResource, ns.name, "never-ran"),
      { spec: { termination: { mode: "Immediate" } } },
      "merge",
    );
    await eventually("never-ran deleted", () => gone("never-ran"), 60_000);
  });

  test("a TTL added after the Run finished is honoured", async () => {
    await createRuns(client, ns.name, [runManifest("late-ttl", "pool")]);
    const r = await eventually("bound", async () => {
      const x = await getRun(client, ns.name, "late-ttl");
      return x.status?.phase === "Scheduled" ? x : undefined;
    });
    await writeAsRuntimed(client, r, "Succeeded");
    // Not an assertion: a pause so the controller most likely sees the finished Run without a
    // TTL first (the case this is about). If it sees both at once the test still passes.
    await Bun.sleep(500);
    await client.patch(
      path(RunResource, ns.name, "late-ttl"),
      { spec: { ttlSecondsAfterFinished: 0 } },
      "merge",
    );
    await eventually("late-ttl deleted", () => gone("late-ttl"), 60_000);
  });
});
