import { describe, expect, test } from "bun:test";
import { type PersistentWorkspace, Reason } from "@kruntimes/api";
import { aLease, aPod } from "../../../testing/fixtures.ts";
import { aWorkspace, boundWorkspace } from "../../../testing/workspace-fixtures.ts";
import { observeLease } from "../../cache/heartbeat.ts";
import { PodInfo, PodUsage } from "../../cache/pod-info.ts";
import { findPod, isPlacement } from "../../cycle/find-pod.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { Code } from "../../framework/status.ts";
import type { RunRequest } from "../../framework/types.ts";
import { builtinRegistry, DEFAULT_PROFILE } from "../index.ts";
import { factory, workspaceVerdict } from "./workspace.ts";

const NOW = 1_700_000_000_000;
const runtime = { key: "ns/rt", capacity: { runs: 4 } };

function req(workspace?: string, runtimeName = "rt"): RunRequest {
  return {
    key: "ns/r",
    runtimeKey: `ns/${runtimeName}`,
    namespace: "ns",
    labels: {},
    priority: 0,
    names: ["runs"],
    amounts: [1],
    ...(workspace ? { workspace } : {}),
  };
}

function pod(name: string, uid = `uid-${name}`, used = 0): PodInfo {
  const p = aPod({ name, uid, capacity: { runs: 4 } });
  const info = new PodInfo(p, new PodUsage(`ns/${name}`, uid));
  info.heartbeat = observeLease(aLease(name, uid, NOW - 1000), undefined, NOW);
  if (used) info.usage.add("ns/other", ["runs"], [used]);
  return info;
}

function frameworkWith(...workspaces: PersistentWorkspace[]) {
  const byKey = new Map(workspaces.map((w) => [`${w.metadata.namespace}/${w.metadata.name}`, w]));
  return builtinRegistry({ workspaces: byKey }).build(DEFAULT_PROFILE);
}

describe("workspace plugin", () => {
  const pods = [pod("a"), pod("b"), pod("c")];

  test("a Run without a workspace is placed as before (least loaded, ties by name)", () => {
    const out = findPod(frameworkWith(), new CycleState(), req(), runtime, pods, NOW);
    expect(isPlacement(out) && out.pod.name).toBe("a");
  });

  test("a Run with a Bound workspace goes to the bound pod only, even when others are emptier", () => {
    const busy = [pod("a"), pod("b", "uid-b", 3), pod("c")];
    const fw = frameworkWith(aWorkspace({ name: "w", status: boundWorkspace("b") }));
    const out = findPod(fw, new CycleState(), req("w"), runtime, busy, NOW);
    expect(isPlacement(out) && out.pod.name).toBe("b");
  });

  test("the bound pod full: InsufficientCapacity (a release on it wakes the Run), not a workspace reason", () => {
    const full = [pod("a"), pod("b", "uid-b", 4)];
    const fw = frameworkWith(aWorkspace({ name: "w", status: boundWorkspace("b") }));
    const out = findPod(fw, new CycleState(), req("w"), runtime, full, NOW);
    if (isPlacement(out)) throw new Error("placed");
    expect(out.status.reason).toBe(Reason.InsufficientCapacity);
    expect(out.status.message).toBe(
      "0/2 pods can take the Run: 1 insufficient runs, 1 not the workspace's pod",
    );
  });

  test("a re-created pod of the same name (another UID) never takes the Run", () => {
    const fw = frameworkWith(aWorkspace({ name: "w", status: boundWorkspace("b") }));
    const out = findPod(fw, new CycleState(), req("w"), runtime, [pod("a"), pod("b", "uid-new")], NOW);
    if (isPlacement(out)) throw new Error("placed");
    expect(out.status.reason).toBe(Reason.WorkspaceUnavailable);
    expect(out.status.message).toBe("0/2 pods can take the Run: 2 not the workspace's pod");
  });

  const cases: [string, PersistentWorkspace | undefined, RunRequest, string][] = [
    [
      "not found",
      undefined,
      req("w"),
      'PersistentWorkspace "w" not found in namespace "ns": create it (kubectl get persistentworkspaces -n ns); the Run is placed once it is bound',
    ],
    [
      "not bound yet (its status says why)",
      aWorkspace({ name: "w", status: { phase: "Pending", message: 'no ready pod of Runtime "rt"' } }),
      req("w"),
      'PersistentWorkspace "w" is not bound to a pod yet: no ready pod of Runtime "rt"',
    ],
    [
      "not reconciled yet",
      aWorkspace({ name: "w" }),
      req("w"),
      'PersistentWorkspace "w" is not bound to a pod yet',
    ],
    [
      "Released by spec before the status says so",
      aWorkspace({ name: "w", spec: { released: true }, status: boundWorkspace("b") }),
      req("w"),
      'PersistentWorkspace "w" is Released: it takes no new Runs (spec.released)',
    ],
    [
      "Lost",
      aWorkspace({
        name: "w",
        status: { ...boundWorkspace("b"), phase: "Lost", message: 'pod "b" is gone' },
      }),
      req("w"),
      'PersistentWorkspace "w" is Lost (pod "b" is gone): its data is gone for good; delete the Run, or create a new workspace and a new Run',
    ],
    [
      "being deleted",
      aWorkspace({ name: "w", deleting: true, status: boundWorkspace("b") }),
      req("w"),
      'PersistentWorkspace "w" is being deleted: it takes no new Runs',
    ],
    [
      "another Runtime (spec.runtime)",
      aWorkspace({ name: "w", spec: { runtime: "python" } }),
      req("w"),
      'PersistentWorkspace "w" belongs to Runtime "python", this Run names Runtime "rt": a workspace\'s directory lives on its Runtime\'s pods; use spec.runtime "python"',
    ],
    [
      "another Runtime (bound by the first Run)",
      aWorkspace({ name: "w", status: boundWorkspace("b", "python") }),
      req("w"),
      'PersistentWorkspace "w" belongs to Runtime "python", this Run names Runtime "rt": a workspace\'s directory lives on its Runtime\'s pods; use spec.runtime "python"',
    ],
  ];
  for (const [name, ws, run, message] of cases) {
    test(`waits: ${name}`, () => {
      const v = workspaceVerdict(run, ws);
      expect(v).toMatchObject({
        code: Code.UnschedulableAndUnresolvable,
        reason: Reason.WorkspaceUnavailable,
        plugin: "workspace",
        message,
      });
      const fw = frameworkWith(...(ws ? [ws] : []));
      const out = findPod(fw, new CycleState(), run, runtime, pods, NOW);
      if (isPlacement(out)) throw new Error("placed");
      expect(out.status.message).toBe(message);
    });
  }

  test("the factory takes no args; without a lookup a workspace Run waits as not found", () => {
    expect(() => factory(undefined)({ x: 1 })).toThrow("workspace takes no args");
    const plugin = factory(undefined)(undefined);
    expect(plugin.preFilter(new CycleState(), req("w"), runtime)?.reason).toBe(Reason.WorkspaceUnavailable);
    expect(plugin.preFilter(new CycleState(), req(), runtime)).toBeUndefined();
  });
});
