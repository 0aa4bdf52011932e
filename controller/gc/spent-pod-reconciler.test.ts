import { describe, expect, test } from "bun:test";
import type { Run } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";
import { Registry } from "prom-client";
import { aRun, boundTo } from "../testing/fixtures.ts";
import { SpentPodReconciler, spentPodKey } from "./spent-pod-reconciler.ts";

function setup(_run: Run, pod: { uid: string; deletionTimestamp?: string } | undefined) {
  const deletes: { path: string; body: unknown }[] = [];
  const client = {
    delete: async (path: string, body: unknown) => {
      deletes.push({ path, body });
    },
  } as unknown as KubeClient;
  const r = new SpentPodReconciler({
    pods: new Map(pod ? [["ns/p1", { metadata: pod }]] : []),
    client,
    registry: new Registry(),
  });
  return { r, deletes };
}

describe("SpentPodReconciler", () => {
  test("a finished session's pod is deleted, preconditioned on its UID", async () => {
    const { r, deletes } = setup(
      aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Succeeded") }),
      {
        uid: "uid-p1",
      },
    );
    await r.reconcile(
      spentPodKey(aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Succeeded") })) ?? "",
    );
    expect(deletes).toHaveLength(1);
    expect(deletes[0]?.path).toContain("/pods/p1");
    expect((deletes[0]?.body as { preconditions?: { uid: string } } | undefined)?.preconditions?.uid).toBe(
      "uid-p1",
    );
  });

  const untouched: [string, Run, { uid: string; deletionTimestamp?: string } | undefined][] = [
    [
      "a session still Ready",
      aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Ready") }),
      { uid: "uid-p1" },
    ],
    ["a finished task", aRun({ name: "s", status: boundTo("p1", 1, "Succeeded") }), { uid: "uid-p1" }],
    [
      "a new pod under the same name",
      aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Failed") }),
      { uid: "uid-other" },
    ],
    [
      "a pod already terminating",
      aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Cancelled") }),
      { uid: "uid-p1", deletionTimestamp: "2026-01-01T00:00:00Z" },
    ],
    [
      "a pod already gone",
      aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Succeeded") }),
      undefined,
    ],
  ];
  for (const [name, run, pod] of untouched) {
    test(`leaves alone: ${name}`, async () => {
      const { r, deletes } = setup(run, pod);
      const key = spentPodKey(run);
      if (key) await r.reconcile(key);
      expect(deletes).toEqual([]);
    });
  }

  test("a session deleted while it held its pod spends it; a deleted task or Pending session does not", () => {
    const ready = aRun({ name: "s", mode: "session", status: boundTo("p1", 1, "Ready") });
    expect(spentPodKey(ready)).toBeUndefined();
    expect(spentPodKey(ready, true)).toMatch(/^ns\/p1\//);
    expect(spentPodKey(aRun({ name: "t", status: boundTo("p1", 1, "Running") }), true)).toBeUndefined();
    expect(spentPodKey(aRun({ name: "q", mode: "session" }), true)).toBeUndefined();
  });
});
