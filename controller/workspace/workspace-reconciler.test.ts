import { describe, expect, test } from "bun:test";
import { type PersistentWorkspace, type Run, WORKSPACE_FINALIZER } from "@kruntimes/api";
import pino from "pino";
import { Registry } from "prom-client";
import { FakeWorkspaceApi } from "../testing/fake-workspace-api.ts";
import { aRun, boundTo } from "../testing/fixtures.ts";
import { aWorkspace, boundWorkspace, type WorkspaceFixture } from "../testing/workspace-fixtures.ts";
import { ManualClock } from "../util/clock.ts";
import { choosePod } from "./binding.ts";
import { WorkspaceIndex } from "./workspace-index.ts";
import { WorkspaceReconciler } from "./workspace-reconciler.ts";

const PODS = [
  { name: "p1", uid: "uid-p1" },
  { name: "p2", uid: "uid-p2" },
];

function setup(f: WorkspaceFixture, runs: Run[] = [], pods = PODS, view?: PersistentWorkspace) {
  const api = new FakeWorkspaceApi(aWorkspace(f));
  const index = new WorkspaceIndex();
  const runMap = new Map(runs.map((r) => [`${r.metadata.namespace}/${r.metadata.name}`, r]));
  for (const r of runs) index.runChanged(r);
  const clock = new ManualClock(Date.parse("2026-01-03T00:00:00Z"));
  const r = new WorkspaceReconciler({
    workspaces: { get: () => view ?? api.stored },
    runs: runMap,
    index,
    pods: {
      pod: (key) => pods.find((p) => `ns/${p.name}` === key),
      bindable: (rt) => (rt === "ns/rt" ? pods : []),
    },
    client: api.client,
    clock,
    registry: new Registry(),
    log: pino({ level: "silent" }),
  });
  return { api, r, clock, index };
}

function usingW(name: string, status?: Run["status"]): Run {
  const run = aRun({ name, ...(status ? { status } : {}) });
  run.spec.workspace = { name: "w" };
  return run;
}

describe("WorkspaceReconciler", () => {
  test("binds: the finalizer first, then one fenced status write; nothing more when unchanged", async () => {
    const { api, r } = setup({ name: "w", uid: "u-1", spec: { runtime: "rt" } });
    expect(await r.reconcile("ns/w")).toEqual({ kind: "done" });
    expect(api.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      "PATCH /apis/kruntimes.io/v1alpha1/namespaces/ns/persistentworkspaces/w",
      "PATCH /apis/kruntimes.io/v1alpha1/namespaces/ns/persistentworkspaces/w/status",
    ]);
    expect(api.requests[1]?.body).toMatchObject([
      { op: "test", path: "/status", value: null },
      { op: "add" },
    ]);
    const stored = api.stored as PersistentWorkspace;
    expect(stored.metadata.finalizers).toEqual([WORKSPACE_FINALIZER]);
    expect(stored.status).toMatchObject({ phase: "Bound", boundPod: choosePod("u-1", PODS)?.name });
    await r.reconcile("ns/w");
    expect(api.requests).toHaveLength(2);
  });

  test("Lost is written fenced on the bound pod's UID; a stale plan cannot overwrite a newer binding", async () => {
    const { api, r } = setup({ name: "w", status: boundWorkspace("p9"), finalizers: [WORKSPACE_FINALIZER] });
    await r.reconcile("ns/w");
    expect(api.requests[0]?.body).toMatchObject([
      { op: "test", path: "/status/phase", value: "Bound" },
      { op: "test", path: "/status/boundPodUID", value: "uid-p9" },
      { op: "add", path: "/status" },
    ]);
    expect(api.stored?.status?.phase).toBe("Lost");
    // Someone else moved the stored status on: the write is refused (422) and the key is done.
    const staleView = aWorkspace({ name: "w", status: boundWorkspace("p9") });
    const stale = setup({ name: "w", status: boundWorkspace("p1") }, [], PODS, staleView);
    expect(await stale.r.reconcile("ns/w")).toEqual({ kind: "done" });
    expect(stale.api.stored?.status?.boundPod).toBe("p1");
  });

  test("counts active Runs and records the last use when they end", async () => {
    const { api, r, index } = setup({ name: "w", status: boundWorkspace("p1") }, [
      usingW("a", boundTo("p1", 1, "Running")),
    ]);
    await r.reconcile("ns/w");
    expect(api.stored?.status).toMatchObject({ activeRuns: 1 });
    expect(api.stored?.status?.lastUsedMicros).toBeUndefined();
    index.runDeleted("ns/a");
    await r.reconcile("ns/w");
    expect(api.stored?.status?.activeRuns).toBe(0);
    expect(api.stored?.status?.lastUsedMicros).toBe(Date.parse("2026-01-03T00:00:00Z") * 1000);
  });

  test("TTL: requeued until due, then deleted with a UID precondition", async () => {
    const last = Date.parse("2026-01-03T00:00:00Z") * 1000;
    const { api, r, clock } = setup({
      name: "w",
      uid: "u-7",
      spec: { ttlSecondsAfterUnused: 30 },
      status: { ...boundWorkspace("p1"), activeRuns: 0, lastUsedMicros: last },
      finalizers: [WORKSPACE_FINALIZER],
    });
    const first = await r.reconcile("ns/w");
    expect(first.kind).toBe("requeueAfter");
    expect((first as { ms: number }).ms).toBe(30_000);
    clock.advance(30_000);
    await r.reconcile("ns/w");
    const del = api.requests.find((q) => q.method === "DELETE");
    expect(del?.body).toMatchObject({ preconditions: { uid: "u-7" } });
    // The finalizer holds it for runtimed on p1, which removes the directory.
    expect(api.stored?.metadata.deletionTimestamp).toBeDefined();
    expect(api.stored?.metadata.finalizers).toEqual([WORKSPACE_FINALIZER]);
  });

  test("deleted and never bound, or Lost: the controller removes the finalizer (tested by entry)", async () => {
    const { api, r } = setup({ name: "w", deleting: true, finalizers: ["other", WORKSPACE_FINALIZER] });
    await r.reconcile("ns/w");
    const patch = api.requests.find((q) => q.path.endsWith("/w"));
    expect(patch?.body).toEqual([
      { op: "test", path: "/metadata/uid", value: "wsuid-w-0000" },
      { op: "test", path: "/metadata/finalizers/1", value: WORKSPACE_FINALIZER },
      { op: "remove", path: "/metadata/finalizers/1" },
    ]);
    expect(api.stored?.metadata.finalizers).toEqual(["other"]);
    const bound = setup({
      name: "w",
      deleting: true,
      finalizers: [WORKSPACE_FINALIZER],
      status: boundWorkspace("p1"),
    });
    await bound.r.reconcile("ns/w");
    expect(bound.api.stored?.metadata.finalizers).toEqual([WORKSPACE_FINALIZER]);
  });
});
