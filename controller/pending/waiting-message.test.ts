import { describe, expect, test } from "bun:test";
import { Reason, type Run } from "@kruntimes/api";
import { waitingMessage } from "./waiting-message.ts";

const run = { metadata: { name: "r", namespace: "team-a" }, spec: { runtime: "pythn" } } as Run;

describe("waitingMessage", () => {
  test("RuntimeNotFound names the Runtime, its namespace and what to do", () => {
    expect(waitingMessage(run, Reason.RuntimeNotFound, "Runtime not found")).toBe(
      'Runtime "pythn" not found in namespace "team-a": create it, or fix spec.runtime (kubectl get runtimes -n team-a); the Run is placed as soon as it exists',
    );
  });
  test("NoReadyPods is prefixed with the Runtime; other reasons keep the scheduler's message", () => {
    expect(waitingMessage(run, Reason.NoReadyPods, "Runtime has no pods")).toBe(
      'Runtime "pythn": Runtime has no pods',
    );
    expect(waitingMessage(run, Reason.InsufficientCapacity, "2 pods full")).toBe("2 pods full");
  });
  test("WorkspaceUnavailable keeps the plugin's message, and explains a pod-level summary", () => {
    const ws = { ...run, spec: { ...run.spec, workspace: { name: "data" } } } as Run;
    expect(waitingMessage(ws, Reason.WorkspaceUnavailable, 'PersistentWorkspace "data" is Released')).toBe(
      'PersistentWorkspace "data" is Released',
    );
    expect(
      waitingMessage(ws, Reason.WorkspaceUnavailable, "0/2 pods can take the Run: 2 not the workspace's pod"),
    ).toBe(
      'PersistentWorkspace "data": its bound pod cannot take the Run (0/2 pods can take the Run: 2 not the workspace\'s pod); if that pod is gone the workspace turns Lost',
    );
  });
});
