import { describe, expect, test } from "bun:test";
import type { Run } from "@kruntimes/api";
import { type KubeClient, KubeError } from "@kruntimes/kube";
import { Registry } from "prom-client";
import { aRun } from "../testing/fixtures.ts";
import { ManualClock } from "../util/clock.ts";
import { TtlReconciler } from "./ttl-reconciler.ts";

function setup(run: Run, deleteError?: number) {
  const clock = new ManualClock();
  const deletes: { path: string; body: unknown }[] = [];
  const client = {
    async delete(path: string, body: unknown) {
      if (deleteError) throw new KubeError("DELETE", path, deleteError, { message: "x" });
      deletes.push({ path, body });
    },
  } as unknown as KubeClient;
  const r = new TtlReconciler({ runs: new Map([["ns/a", run]]), client, clock, registry: new Registry() });
  return { r, deletes, clock };
}

describe("TtlReconciler", () => {
  test("waits until finished + ttl, then deletes with a UID precondition", async () => {
    const finished = new ManualClock().now();
    const run = aRun({
      name: "a",
      ttl: 5,
      status: { phase: "Succeeded", timing: { finishedMicros: finished * 1000 } },
    });
    const { r, deletes, clock } = setup(run);
    expect(await r.reconcile("ns/a")).toEqual({ kind: "requeueAfter", ms: 5000 });
    clock.advance(5000);
    expect((await r.reconcile("ns/a")).kind).toBe("done");
    expect(deletes).toEqual([
      {
        path: "/apis/kruntimes.io/v1alpha1/namespaces/ns/runs/a",
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          preconditions: { uid: "uid-a" },
          propagationPolicy: "Background",
        },
      },
    ]);
  });

  test("unfinished Runs and Runs without a TTL are not touched", async () => {
    for (const run of [
      aRun({ name: "a", ttl: 0, status: { phase: "Running" } }),
      aRun({ name: "a", status: { phase: "Failed" } }),
    ]) {
      const { r, deletes } = setup(run);
      expect((await r.reconcile("ns/a")).kind).toBe("done");
      expect(deletes).toEqual([]);
    }
  });

  test("without timing, the TTL counts from when the controller first saw it finished", async () => {
    const { r, deletes, clock } = setup(aRun({ name: "a", ttl: 2, status: { phase: "Failed" } }));
    expect(await r.reconcile("ns/a")).toEqual({ kind: "requeueAfter", ms: 2000 });
    clock.advance(1500);
    expect(await r.reconcile("ns/a")).toEqual({ kind: "requeueAfter", ms: 500 });
    clock.advance(500);
    await r.reconcile("ns/a");
    expect(deletes.length).toBe(1);
  });

  test("a Run already gone or replaced (precondition failed) is done", async () => {
    for (const code of [404, 409]) {
      const { r } = setup(aRun({ name: "a", ttl: 0, status: { phase: "Failed" } }), code);
      expect((await r.reconcile("ns/a")).kind).toBe("done");
    }
  });
});
