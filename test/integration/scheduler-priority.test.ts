/**
 * Run priority on the real control plane: with one slot and Runs waiting, each release goes to
 * the highest priority Run, equal priorities go in creation order, and aging lets a Run that has
 * waited long enough go before a newer Run of somewhat higher priority. The queue-wait metric is
 * labelled by priority band.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Annotations, type Run } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
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

function prioritized(name: string, priority?: number): Run {
  const m = runManifest(name, "one", priority === undefined ? {} : { priority });
  // Sub-second creation order (creationTimestamp has 1 s precision; the queue refines it with this).
  m.metadata.annotations = { [Annotations.createdMicros]: String(Date.now() * 1000) };
  return m;
}

suite("scheduler: Run priority", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;

  const run = (name: string) => getRun(client, ns.name, name);
  const scheduledOne = (names: string[]) =>
    eventually(`one of ${names.join(", ")} Scheduled`, async () => {
      const rs = await Promise.all(names.map(run));
      return rs.find((r) => r.status?.phase === "Scheduled");
    });
  const pendingAll = (names: string[]) =>
    eventually(`${names.join(", ")} waiting`, async () =>
      (await Promise.all(names.map(run))).every((r) => r.status?.waitingReason === "InsufficientCapacity"),
    );

  /** Finishes `holder`, then each Run as it gets the slot; returns the order they got it in. */
  async function drainInOrder(holder: string, waiting: string[]): Promise<string[]> {
    const order: string[] = [];
    let current = await run(holder);
    const left = new Set(waiting);
    while (left.size > 0) {
      await writeAsRuntimed(client, current, "Succeeded");
      current = await scheduledOne([...left]);
      const name = current.metadata.name as string;
      order.push(name);
      left.delete(name);
    }
    await writeAsRuntimed(client, current, "Succeeded");
    return order;
  }

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-sched-priority");
    ctl = startController({ namespace: ns.name, kubeconfig: cluster?.kubeconfig as string });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, runtimeManifest("one", { replicas: 1, capacity: { runs: 1 } }));
    await eventually(
      "1 pod available",
      async () => (await getRuntime(client, ns.name, "one")).status?.availableReplicas === 1,
      90_000,
    );
  });

  afterAll(async () => {
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  });

  test("each release goes to the highest priority; equal priorities in creation order", async () => {
    await createRuns(client, ns.name, [prioritized("holder-1")]);
    await scheduledOne(["holder-1"]);
    const names = ["low", "mid-1", "high", "mid-2", "mid-3"];
    const prio: Record<string, number> = { low: -10, "mid-1": 0, high: 10, "mid-2": 0, "mid-3": 0 };
    // One at a time, so creation order is well defined.
    for (const n of names) await createRuns(client, ns.name, [prioritized(n, prio[n])], 1);
    await pendingAll(names);
    expect(await drainInOrder("holder-1", names)).toEqual(["high", "mid-1", "mid-2", "mid-3", "low"]);
  });

  test("aging: a Run that waited longer than the priority gap goes first (+1 per second waited)", async () => {
    await createRuns(client, ns.name, [prioritized("holder-2")]);
    await scheduledOne(["holder-2"]);
    await createRuns(client, ns.name, [prioritized("patient", 0)]);
    // patient waits ≥ 3.5 s (2.5 s after creationTimestamp rounding) before the others arrive.
    await Bun.sleep(3500);
    await createRuns(client, ns.name, [prioritized("newer", 2), prioritized("urgent", 10)], 1);
    await pendingAll(["patient", "newer", "urgent"]);
    expect(await drainInOrder("holder-2", ["patient", "newer", "urgent"])).toEqual([
      "urgent",
      "patient",
      "newer",
    ]);
  });

  test("queue wait is measured per priority band (bounded labels)", async () => {
    const port = await ctl.metricsPort();
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const count = (band: string) =>
      Number(
        new RegExp(`kruntimes_scheduler_queue_wait_seconds_count\\{priority="${band}"\\} (\\d+)`).exec(
          text,
        )?.[1],
      );
    expect(count("high")).toBeGreaterThanOrEqual(2);
    expect(count("default")).toBeGreaterThanOrEqual(4);
    expect(count("low")).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(
      /kruntimes_scheduler_rejections_total\{plugin="resources-fit",reason="InsufficientCapacity"\}/,
    );
  });
});
