import { describe, expect, test } from "bun:test";
import type { Run } from "@kruntimes/api";
import { WorkspaceWakeups } from "../scheduler/plugins/workspace/wakeups.ts";
import { aRun, boundTo } from "../testing/fixtures.ts";
import { aWorkspace, boundWorkspace } from "../testing/workspace-fixtures.ts";
import { WorkspaceIndex } from "./workspace-index.ts";

function run(name: string, ws: string | undefined, status?: Run["status"]): Run {
  const r = aRun({ name, ...(status ? { status } : {}) });
  if (ws) r.spec.workspace = { name: ws };
  return r;
}

describe("WorkspaceIndex", () => {
  test("Runs by workspace, the Pending ones apart; a Run leaving Pending or deleted drops out", () => {
    const i = new WorkspaceIndex();
    expect(i.runChanged(run("a", "w"))).toBe("ns/w");
    expect(i.runChanged(run("b", "w", boundTo("p1", 1, "Running")))).toBe("ns/w");
    expect(i.runChanged(run("c", undefined))).toBeUndefined();
    expect([...i.runsOf("ns/w")]).toEqual(["ns/a", "ns/b"]);
    expect([...i.pendingRunsOf("ns/w")]).toEqual(["ns/a"]);
    i.runChanged(run("a", "w", boundTo("p1")));
    expect([...i.pendingRunsOf("ns/w")]).toEqual([]);
    expect(i.runDeleted("ns/b")).toBe("ns/w");
    expect(i.runDeleted("ns/b")).toBeUndefined();
    expect([...i.runsOf("ns/w")]).toEqual(["ns/a"]);
  });

  test("workspaces by bound pod, and the unbound ones by namespace", () => {
    const i = new WorkspaceIndex();
    i.workspaceChanged(aWorkspace({ name: "w" }));
    expect([...i.unboundIn("ns")]).toEqual(["ns/w"]);
    i.workspaceChanged(aWorkspace({ name: "w", status: boundWorkspace("p1") }));
    expect([...i.unboundIn("ns")]).toEqual([]);
    expect([...i.boundTo("ns/p1")]).toEqual(["ns/w"]);
    i.workspaceChanged(aWorkspace({ name: "x", deleting: true }));
    expect([...i.unboundIn("ns")]).toEqual([]);
    i.workspaceDeleted("ns/w");
    expect([...i.boundTo("ns/p1")]).toEqual([]);
  });
});

describe("WorkspaceWakeups", () => {
  function setup() {
    const i = new WorkspaceIndex();
    const states = new Map<string, string>();
    const woken: string[] = [];
    const wake = new WorkspaceWakeups(i, {
      get: (k) => (states.has(k) ? { state: states.get(k) as string } : undefined),
      activate: (k) => {
        woken.push(k);
        states.set(k, "active");
      },
    });
    return { i, states, woken, wake };
  }

  test("a workspace change wakes exactly its parked Runs; Runs in backoff keep waiting", () => {
    const { i, states, woken, wake } = setup();
    for (const [name, ws, state] of [
      ["a", "w", "parked"],
      ["b", "w", "backoff"],
      ["c", "other", "parked"],
    ] as const) {
      i.runChanged(run(name, ws));
      states.set(`ns/${name}`, state);
    }
    expect(wake.workspaceChanged("ns/w")).toBe(1);
    expect(woken).toEqual(["ns/a"]);
  });

  test("capacity freed on a pod wakes Runs of the workspaces bound there, as many as fit", () => {
    const { i, states, woken, wake } = setup();
    i.workspaceChanged(aWorkspace({ name: "w", status: boundWorkspace("p1") }));
    i.workspaceChanged(aWorkspace({ name: "v", status: boundWorkspace("p1") }));
    for (const [name, ws] of [
      ["a", "w"],
      ["b", "w"],
      ["c", "v"],
    ] as const) {
      i.runChanged(run(name, ws));
      states.set(`ns/${name}`, "parked");
    }
    expect(wake.podFreed("ns/p1", 2)).toBe(2);
    expect(woken).toEqual(["ns/a", "ns/b"]);
    expect(wake.podFreed("ns/p2", 5)).toBe(0);
    expect(wake.podFreed("ns/p1", 0)).toBe(1);
  });
});
