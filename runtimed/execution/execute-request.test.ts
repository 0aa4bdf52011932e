import { describe, expect, test } from "bun:test";
import type { Run, RunSpec } from "@kruntimes/api";
import { executeRequest } from "./execute-request.ts";

const run = (spec: Partial<RunSpec>): Run =>
  ({
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "r", namespace: "ns", uid: "u-1" },
    spec: { runtime: "bash", mode: { task: {} }, ...spec },
  }) as Run;

describe("executeRequest", () => {
  test("inline script", () => {
    const r = executeRequest(run({ source: { inline: "echo hi" } }), 2, "/workspace");
    expect(r.program).toEqual({ case: "inline", value: "echo hi" });
    expect(r.args).toEqual([]);
    expect(r).toMatchObject({ runUid: "u-1", runName: "r", attempt: 2, timeoutMs: 0 });
  });
  test("entrypoint relative to the workspace, absolute kept, args passed", () => {
    const rel = executeRequest(
      run({ mode: { task: { entrypoint: "bin/x.sh", args: ["a", "b"] } } }),
      1,
      "/workspace",
    );
    expect(rel.program).toEqual({ case: "entrypoint", value: "/workspace/bin/x.sh" });
    expect(rel.args).toEqual(["a", "b"]);
    const abs = executeRequest(run({ mode: { task: { entrypoint: "/opt/x.py" } } }), 1, "/workspace");
    expect(abs.program).toEqual({ case: "entrypoint", value: "/opt/x.py" });
  });
  test("commands alone, env as a map, timeout per attempt, limits that fit the status", () => {
    const r = executeRequest(
      run({
        mode: { task: { args: ["echo 1", "echo 2"] } },
        env: [{ name: "A", value: "1" }],
        timeout: "1m30s",
      }),
      1,
      "/workspace",
    );
    expect(r.program.case).toBeUndefined();
    expect(r.args).toEqual(["echo 1", "echo 2"]);
    expect(r.env).toEqual({ A: "1" });
    expect(r.timeoutMs).toBe(90_000);
    expect(r.limits).toMatchObject({ tailBytes: 16384, outputsMaxCount: 32, outputValueMaxBytes: 4096 });
  });
  test("a PersistentWorkspace's directory is the working directory; none: the server's default", () => {
    const ws = executeRequest(run({ source: { inline: "ls" } }), 1, "/workspace", "workspaces/data-1a2b3c4d");
    expect(ws.workingDir).toBe("workspaces/data-1a2b3c4d");
    expect(executeRequest(run({ source: { inline: "ls" } }), 1, "/workspace").workingDir).toBe("");
  });
});
