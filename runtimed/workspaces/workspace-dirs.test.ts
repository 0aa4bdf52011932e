import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { type PersistentWorkspace, type Run, WORKSPACE_FINALIZER } from "@kruntimes/api";
import { type KubeClient, KubeError } from "@kruntimes/kube";
import pino from "pino";
import { WorkspaceDirs } from "./workspace-dirs.ts";

const POD = { name: "p1", namespace: "ns", uid: "pod-uid-1", ip: "127.0.0.1", node: "n" };

function ws(
  over: Partial<PersistentWorkspace["metadata"]> = {},
  status = {},
  spec = {},
): PersistentWorkspace {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "PersistentWorkspace",
    metadata: { name: "data", namespace: "ns", uid: "1a2b3c4d-5555", ...over },
    spec,
    status: { phase: "Bound", boundPod: "p1", boundPodUID: POD.uid, ...status },
  };
}

function run(): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "r", namespace: "ns", uid: "run-1" },
    spec: { runtime: "bash", mode: { task: { args: ["true"] } }, workspace: { name: "data" } },
  } as Run;
}

function setup(o: { stored?: PersistentWorkspace; removeError?: unknown; inUse?: boolean } = {}) {
  const calls: { method: string; path: string; body?: unknown }[] = [];
  const removed: string[] = [];
  const client = {
    async get(path: string) {
      calls.push({ method: "GET", path });
      if (!o.stored) throw new KubeError("GET", path, 404, { message: "not found" });
      return o.stored;
    },
    async patch(path: string, body: unknown) {
      calls.push({ method: "PATCH", path, body });
      return o.stored;
    },
  } as unknown as KubeClient;
  const dirs = new WorkspaceDirs({
    o: { pod: POD },
    client,
    runtime: {
      removeDirectory: async (req: { path: string }) => {
        if (o.removeError) throw o.removeError;
        removed.push(req.path);
        return { existed: true };
      },
    } as never,
    log: pino({ level: "silent" }),
    inUse: () => o.inUse ?? false,
    retryMs: 60_000,
  });
  return { dirs, calls, removed };
}

const deleting = { deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [WORKSPACE_FINALIZER] };

describe("WorkspaceDirs", () => {
  test("a Run's directory: <workspaces>/<name>-<uid prefix>, read from the apiserver before the watch has it", async () => {
    const { dirs, calls } = setup({ stored: ws() });
    expect(await dirs.directoryFor(run())).toEqual({ dir: "workspaces/data-1a2b3c4d" });
    expect(calls[0]).toMatchObject({
      method: "GET",
      path: "/apis/kruntimes.io/v1alpha1/namespaces/ns/persistentworkspaces/data",
    });
  });

  test("not bound to this pod (another pod, an earlier incarnation of this one), or gone: an error", async () => {
    expect(await setup({ stored: ws({}, { boundPodUID: "old-uid" }) }).dirs.directoryFor(run())).toEqual({
      error: 'PersistentWorkspace "data" is not bound to this pod (Bound, pod p1)',
    });
    expect(await setup().dirs.directoryFor(run())).toEqual({
      error: 'PersistentWorkspace "data" does not exist any more',
    });
  });

  test("deleted and unused: the Runtime Server removes the directory, then the finalizer goes (UID and entry tested)", async () => {
    const w = ws({ ...deleting, finalizers: ["other", WORKSPACE_FINALIZER] }, { activeRuns: 0 });
    const { dirs, calls, removed } = setup({ stored: w });
    await dirs.check(w);
    expect(removed).toEqual(["workspaces/data-1a2b3c4d"]);
    expect(calls).toEqual([
      {
        method: "PATCH",
        path: "/apis/kruntimes.io/v1alpha1/namespaces/ns/persistentworkspaces/data",
        body: [
          { op: "test", path: "/metadata/uid", value: "1a2b3c4d-5555" },
          { op: "test", path: "/metadata/finalizers/1", value: WORKSPACE_FINALIZER },
          { op: "remove", path: "/metadata/finalizers/1" },
        ],
      },
    ]);
  });

  test("Retain: the finalizer goes, the directory stays", async () => {
    const w = ws(deleting, {}, { reclaimPolicy: "Retain" });
    const { dirs, calls, removed } = setup({ stored: w });
    await dirs.check(w);
    expect(removed).toEqual([]);
    expect(calls.map((c) => c.method)).toEqual(["PATCH"]);
  });

  test("nothing happens while a Run uses it, while not deleted, or when bound elsewhere", async () => {
    for (const [w, inUse] of [
      [ws(deleting, { activeRuns: 1 }), false],
      [ws(deleting), true],
      [ws(), false],
      [ws(deleting, { boundPodUID: "other" }), false],
    ] as const) {
      const { dirs, calls, removed } = setup({ stored: w, inUse });
      await dirs.check(w);
      expect([calls.length, removed.length]).toEqual([0, 0]);
    }
  });

  test("a Runtime Server without RemoveDirectory: the finalizer stays (the data is kept)", async () => {
    const w = ws(deleting);
    const { dirs, calls } = setup({ stored: w, removeError: new ConnectError("no", Code.Unimplemented) });
    await dirs.check(w);
    expect(calls).toEqual([]);
    dirs.stop();
  });
});
