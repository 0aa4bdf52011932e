/**
 * Stale-assignment recovery on the real control plane: a Run whose pod is deleted, whose
 * heartbeat stops, or that is never started goes back to Pending with attempt + 1 when its retry
 * policy allows (and lands on a live pod), else ends Failed with the reason; a write from the
 * old pod after recovery is fenced out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
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
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

suite("scheduler: stale-assignment recovery", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;

  const run = (name: string) => getRun(client, ns.name, name);
  const until = (what: string, name: string, ok: (r: Run) => boolean, ms = 30_000) =>
    eventually(
      `${name}: ${what}`,
      async () => {
        const r = await run(name);
        return ok(r) ? r : undefined;
      },
      ms,
    );
  const available = (n: number) =>
    eventually(
      `${n} pods available`,
      async () => (await getRuntime(client, ns.name, "rec")).status?.availableReplicas === n,
      90_000,
    );
  const retry = { retryPolicy: { maxAttempts: 2 } };

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-sched-recovery");
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      flags: [
        "--heartbeat-lease-duration=3s",
        "--heartbeat-interval=1s",
        "--heartbeat-stale-after=5s",
        "--scheduled-start-timeout=6s",
      ],
    });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, runtimeManifest("rec", { replicas: 2, capacity: { runs: 4 } }));
    await available(2);
  });

  afterAll(async () => {
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  });

  test("pod deleted under a Running Run: back to Pending with attempt 2, then bound to a live pod", async () => {
    await createRuns(client, ns.name, [runManifest("del", "rec", retry)]);
    const bound = await until("Scheduled", "del", (r) => r.status?.phase === "Scheduled");
    await writeAsRuntimed(client, bound, "Running");
    const pod = bound.status?.assignment?.pod as string;
    await client.delete(path(R.pods, ns.name, pod));
    const again = await until(
      "attempt 2 bound",
      "del",
      (r) => r.status?.attempt === 2 && r.status?.phase === "Scheduled",
    );
    expect(again.status?.assignment?.pod).not.toBe(pod);
    expect(again.status?.assignment?.attempt).toBe(2);
    // The old pod's runtimed reporting attempt 1 now is fenced out.
    const stale = {
      ...again,
      status: { ...again.status, attempt: 1, assignment: bound.status?.assignment },
    } as Run;
    await expect(writeAsRuntimed(client, stale, "Succeeded")).rejects.toMatchObject({ code: 422 });
    await writeAsRuntimed(client, again, "Succeeded");
    await available(2);
  });

  test("without a retry policy the Run fails with the reason (PodTerminating or PodGone)", async () => {
    await createRuns(client, ns.name, [runManifest("del-final", "rec")]);
    const bound = await until("Scheduled", "del-final", (r) => r.status?.phase === "Scheduled");
    await writeAsRuntimed(client, bound, "Running");
    await client.delete(path(R.pods, ns.name, bound.status?.assignment?.pod as string));
    const failed = await until("Failed", "del-final", (r) => r.status?.phase === "Failed");
    expect(["PodTerminating", "PodGone"]).toContain(failed.status?.reason as string);
    expect(failed.status?.timing?.finishedMicros).toBeGreaterThan(0);
    await available(2);
  });

  test("heartbeat stops: PodUnhealthy, retried on the other pod", async () => {
    await createRuns(client, ns.name, [runManifest("silent", "rec", retry)]);
    const bound = await until("Scheduled", "silent", (r) => r.status?.phase === "Scheduled");
    await writeAsRuntimed(client, bound, "Running");
    const pod = (await readyPods(client, ns.name, "rec")).find(
      (p) => p.metadata.name === bound.status?.assignment?.pod,
    );
    if (!pod) throw new Error("assigned pod not found");
    await heartbeatControl(pod, "pause");
    try {
      const again = await until(
        "attempt 2",
        "silent",
        (r) => r.status?.attempt === 2 && r.status?.phase === "Scheduled",
      );
      expect(again.status?.assignment?.pod).not.toBe(pod.metadata.name as string);
      expect(again.status?.conditions?.find((c) => c.type === "Scheduled")?.status).toBe("True");
    } finally {
      await heartbeatControl(pod, "resume");
    }
    await available(2);
  });

  test("bound but never started: taken back after the start timeout, Failed PodUnhealthy without retries", async () => {
    await createRuns(client, ns.name, [runManifest("stuck", "rec")]);
    await until("Scheduled", "stuck", (r) => r.status?.phase === "Scheduled");
    const failed = await until("Failed", "stuck", (r) => r.status?.phase === "Failed", 60_000);
    expect(failed.status?.reason).toBe("PodUnhealthy");
    expect(failed.status?.message).toContain("did not start");
  });

  test("a Run cancelled while its pod is lost ends Cancelled", async () => {
    await createRuns(client, ns.name, [runManifest("cancel-lost", "rec", retry)]);
    const bound = await until("Scheduled", "cancel-lost", (r) => r.status?.phase === "Scheduled");
    await writeAsRuntimed(client, bound, "Running");
    await client.patch(
      path(RunResource, ns.name, "cancel-lost"),
      { spec: { termination: { mode: "Immediate" } } },
      "merge",
    );
    await client.delete(path(R.pods, ns.name, bound.status?.assignment?.pod as string));
    const r = await until("Cancelled", "cancel-lost", (x) => x.status?.phase === "Cancelled");
    expect(r.status?.reason).toBe("Cancelled");
  });
});
