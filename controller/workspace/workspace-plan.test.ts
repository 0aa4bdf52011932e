import { describe, expect, test } from "bun:test";
import { type Run, WORKSPACE_FINALIZER } from "@kruntimes/api";
import { aRun, boundTo } from "../testing/fixtures.ts";
import { aWorkspace, boundWorkspace, type WorkspaceFixture } from "../testing/workspace-fixtures.ts";
import { choosePod, rendezvousScore } from "./binding.ts";
import { planWorkspace, type WorkspaceFacts } from "./workspace-plan.ts";

const NOW = Date.parse("2026-01-03T00:00:00Z");
const PODS = [
  { name: "p1", uid: "uid-p1" },
  { name: "p2", uid: "uid-p2" },
  { name: "p3", uid: "uid-p3" },
];

function facts(ws: WorkspaceFixture, runs: Run[] = [], o: Partial<WorkspaceFacts> = {}): WorkspaceFacts {
  return {
    ws: aWorkspace(ws),
    runs,
    pod: (name) => PODS.find((p) => p.name === name),
    candidates: (rt) => (rt === "rt" ? PODS : []),
    nowMs: NOW,
    ...o,
  };
}

function runOn(name: string, status: Run["status"], created = "2026-01-01T00:00:00Z"): Run {
  const r = aRun({ name, ...(status ? { status } : {}) });
  r.spec.workspace = { name: "w" };
  r.metadata.creationTimestamp = created;
  return r;
}

const ended = (pod: string, finishedMicros: number): Run["status"] => ({
  ...boundTo(pod, 1, "Succeeded"),
  timing: { finishedMicros },
});

describe("rendezvous binding", () => {
  test("deterministic, independent of candidate order, and spread over pods", () => {
    const a = choosePod("ws-1", PODS);
    expect(choosePod("ws-1", [...PODS].reverse())).toEqual(a as (typeof PODS)[number]);
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const p = choosePod(`ws-${i}`, PODS)?.name ?? "";
      counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    for (const p of PODS) expect(counts.get(p.name) ?? 0).toBeGreaterThan(60);
  });

  test("a pod joining moves only the workspaces it now wins", () => {
    const more = [...PODS, { name: "p4", uid: "uid-p4" }];
    for (let i = 0; i < 100; i++) {
      const before = choosePod(`ws-${i}`, PODS)?.name;
      const after = choosePod(`ws-${i}`, more)?.name;
      if (after !== "p4") expect(after).toBe(before as string);
    }
    expect(rendezvousScore("a", "b")).toBe(rendezvousScore("a", "b"));
    expect(choosePod("ws", [])).toBeUndefined();
  });
});

describe("planWorkspace", () => {
  test("spec.runtime set and a pod available: Bound to the rendezvous pick, finalizer first", () => {
    const plan = planWorkspace(facts({ name: "w", uid: "abcdef12-3456", spec: { runtime: "rt" } }));
    const pick = choosePod("abcdef12-3456", PODS);
    expect(plan.addFinalizer).toBe(true);
    expect(plan.status).toMatchObject({
      phase: "Bound",
      runtime: "rt",
      boundPod: pick?.name,
      boundPodUID: pick?.uid,
      path: "/workspace/runs/workspaces/w-abcdef12",
      activeRuns: 0,
      message: `bound to pod "${pick?.name}"`,
    });
    expect(plan.status.conditions?.[0]).toMatchObject({ type: "Bound", status: "True", reason: "Bound" });
  });

  test("no runtime yet: Pending until a Run names one; then the earliest Run's Runtime", () => {
    expect(planWorkspace(facts({ name: "w" })).status).toMatchObject({
      phase: "Pending",
      message: "spec.runtime is unset: the first Run naming this workspace picks the Runtime",
    });
    const later = runOn("b", undefined, "2026-01-02T00:00:00Z");
    later.spec.runtime = "other";
    const plan = planWorkspace(facts({ name: "w" }, [later, runOn("a", undefined)]));
    expect(plan.status).toMatchObject({ phase: "Bound", runtime: "rt" });
  });

  test("no available pod: Pending with the Runtime named", () => {
    const plan = planWorkspace(facts({ name: "w", spec: { runtime: "rt" } }, [], { candidates: () => [] }));
    expect(plan.addFinalizer).toBe(false);
    expect(plan.status.phase).toBe("Pending");
    expect(plan.status.message).toContain('no available pod of Runtime "rt"');
    expect(plan.status.conditions?.[0]).toMatchObject({ status: "False", reason: "Pending" });
  });

  test("bound: stays bound while the pod exists (availability does not matter), finalizer kept", () => {
    const plan = planWorkspace(
      facts({ name: "w", status: boundWorkspace("p2"), finalizers: [WORKSPACE_FINALIZER] }, [], {
        candidates: () => [],
      }),
    );
    expect(plan.status).toMatchObject({ phase: "Bound", boundPod: "p2", boundPodUID: "uid-p2" });
    expect(plan.addFinalizer).toBe(false);
  });

  test("the bound pod gone, or replaced: Lost, and Lost stays even if the pod comes back", () => {
    const gone = planWorkspace(facts({ name: "w", status: boundWorkspace("p9") }));
    expect(gone.status).toMatchObject({ phase: "Lost", boundPod: "p9", boundPodUID: "uid-p9" });
    expect(gone.status.message).toBe('pod "p9" is gone: the directory went with it');
    const replaced = planWorkspace(
      facts({ name: "w", status: boundWorkspace("p2") }, [], {
        pod: () => ({ uid: "uid-new" }),
      }),
    );
    expect(replaced.status.phase).toBe("Lost");
    expect(replaced.status.message).toContain("was replaced (UID uid-p2 → uid-new)");
    const sticky = planWorkspace(facts({ name: "w", status: { ...gone.status } }));
    expect(sticky.status).toMatchObject({ phase: "Lost", message: gone.status.message });
    expect(sticky.status.conditions?.[0]).toMatchObject({ status: "False", reason: "PodLost" });
  });

  test("released: Released (bound or not), Lost wins over Released", () => {
    expect(
      planWorkspace(facts({ name: "w", spec: { released: true }, status: boundWorkspace("p1") })).status,
    ).toMatchObject({ phase: "Released", boundPod: "p1" });
    const never = planWorkspace(facts({ name: "w", spec: { runtime: "rt", released: true } }));
    expect(never.status).toMatchObject({ phase: "Released" });
    expect(never.status.boundPod).toBeUndefined();
    expect(never.addFinalizer).toBe(false);
    expect(
      planWorkspace(facts({ name: "w", spec: { released: true }, status: boundWorkspace("p9") })).status
        .phase,
    ).toBe("Lost");
  });

  test("activeRuns counts Runs holding a pod; lastUsedMicros is when the last one ended", () => {
    const runs = [
      runOn("a", boundTo("p1", 1, "Running")),
      runOn("b", ended("p1", 5_000_000)),
      runOn("c", undefined),
    ];
    const busy = planWorkspace(
      facts({ name: "w", status: { ...boundWorkspace("p1"), lastUsedMicros: 1 } }, runs),
    );
    expect(busy.status.activeRuns).toBe(1);
    expect(busy.status.lastUsedMicros).toBe(1);
    const idle = planWorkspace(facts({ name: "w", status: boundWorkspace("p1") }, [runs[1] as Run]));
    expect(idle.status).toMatchObject({ activeRuns: 0, lastUsedMicros: 5_000_000 });
    // The Runs that were active are gone (deleted): the end is when the controller saw it.
    const vanished = planWorkspace(facts({ name: "w", status: { ...boundWorkspace("p1"), activeRuns: 2 } }));
    expect(vanished.status.lastUsedMicros).toBe(NOW * 1000);
  });

  test("TTL: from the last use, or creation if never used; not while a Run is active or waiting", () => {
    const spec = { runtime: "rt", ttlSecondsAfterUnused: 60 };
    const used = { ...boundWorkspace("p1"), lastUsedMicros: (NOW - 10_000) * 1000 };
    expect(planWorkspace(facts({ name: "w", spec, status: used })).deleteAtMs).toBe(NOW + 50_000);
    expect(
      planWorkspace(facts({ name: "w", spec, status: boundWorkspace("p1"), created: "2026-01-02T00:00:00Z" }))
        .deleteAtMs,
    ).toBe(Date.parse("2026-01-02T00:01:00Z"));
    const active = [runOn("a", boundTo("p1", 1, "Running"))];
    expect(planWorkspace(facts({ name: "w", spec, status: used }, active)).deleteAtMs).toBeUndefined();
    const waiting = [runOn("a", undefined)];
    expect(planWorkspace(facts({ name: "w", spec, status: used }, waiting)).deleteAtMs).toBeUndefined();
    // A Run waiting on a Released workspace never runs: it does not keep the workspace.
    expect(
      planWorkspace(facts({ name: "w", spec: { ...spec, released: true }, status: used }, waiting))
        .deleteAtMs,
    ).toBe(NOW + 50_000);
    expect(planWorkspace(facts({ name: "w", status: used })).deleteAtMs).toBeUndefined();
  });

  test("deletion: the controller removes the finalizer only when never bound or Lost", () => {
    const fin = { finalizers: [WORKSPACE_FINALIZER], deleting: true };
    expect(planWorkspace(facts({ name: "w", ...fin, status: boundWorkspace("p1") })).removeFinalizer).toBe(
      false,
    );
    expect(planWorkspace(facts({ name: "w", ...fin, status: boundWorkspace("p9") })).removeFinalizer).toBe(
      true,
    );
    const pending = planWorkspace(facts({ name: "w", ...fin, spec: { runtime: "rt" } }));
    expect(pending.removeFinalizer).toBe(true);
    expect(pending.status).toMatchObject({ phase: "Pending", message: "being deleted before it was bound" });
    expect(pending.addFinalizer).toBe(false);
    expect(
      planWorkspace(facts({ name: "w", deleting: true, spec: { ttlSecondsAfterUnused: 0 } })).deleteAtMs,
    ).toBe(undefined);
  });
});
