import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { ExecuteRequestSchema } from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { bashAdapter } from "../bash/adapter.ts";
import { pythonAdapter } from "../python/adapter.ts";
import { RuntimeServerError } from "./errors.ts";
import { parseOptions } from "./options.ts";
import { toExecutionSpec } from "./task-request.ts";

const options = parseOptions(["--workspace", "/ws", "--state-dir", "/st"], {
  PATH: "/bin",
  SHARED: "container",
});
const request = (init: object) => create(ExecuteRequestSchema, { runUid: "u1", attempt: 2, ...init });

describe("toExecutionSpec", () => {
  test("inline: default working dir, env precedence, KRUNTIME_* variables", () => {
    const spec = toExecutionSpec(
      request({
        program: { case: "inline", value: "echo" },
        env: { SHARED: "run", KRUNTIME_ATTEMPT: "9" },
        runName: "n",
      }),
      options,
      bashAdapter,
    );
    expect(spec.program).toEqual({ kind: "inline", script: "echo" });
    expect(spec.cwd).toBe("/ws/runs/u1/2");
    expect(spec.defaultCwd).toBe(true);
    expect(spec.env).toMatchObject({
      PATH: "/bin",
      SHARED: "run",
      KRUNTIME_ATTEMPT: "2",
      KRUNTIME_RUN_NAME: "n",
      KRUNTIME_RUN_UID: "u1",
      KRUNTIME_WORKDIR: "/ws/runs/u1/2",
      KRUNTIME_OUTPUTS: "/st/executions/u1.2/outputs",
    });
    expect(spec.graceMs).toBe(options.defaultGraceMs);
    expect(spec.tailBytes).toBe(options.limits.defaultTailBytes);
  });

  test("entrypoint resolves against the requested working dir", () => {
    const spec = toExecutionSpec(
      request({ program: { case: "entrypoint", value: "bin/x.sh" }, args: ["a"], workingDir: "proj" }),
      options,
      bashAdapter,
    );
    expect(spec.program).toEqual({ kind: "entrypoint", path: "/ws/runs/proj/bin/x.sh", args: ["a"] });
    expect(spec.defaultCwd).toBe(false);
  });

  const startFailures: Array<[string, object, typeof bashAdapter, RegExp]> = [
    [
      "inline with args",
      { program: { case: "inline", value: "x" }, args: ["a"] },
      bashAdapter,
      /takes no args/,
    ],
    ["nothing", {}, bashAdapter, /nothing to run/],
    ["empty entrypoint", { program: { case: "entrypoint", value: "" } }, bashAdapter, /entrypoint is empty/],
    [
      "an env name with =",
      { program: { case: "inline", value: "x" }, env: { "A=B": "1" } },
      bashAdapter,
      /not valid/,
    ],
  ];
  for (const [name, init, adapter, message] of startFailures) {
    test(`${name} is a START_FAILED, not a call error`, () => {
      const spec = toExecutionSpec(request(init), options, adapter);
      expect(spec.program).toBeNull();
      expect(spec.startError).toMatch(message);
    });
  }

  test("python plans args-as-commands into a START_FAILED message", () => {
    const spec = toExecutionSpec(request({ args: ["print(1)"] }), options, pythonAdapter);
    expect(spec.program).toEqual({ kind: "commands", commands: ["print(1)"] });
    expect(pythonAdapter.plan(spec.program!, "/st")).toEqual({
      error: expect.stringContaining("args as commands"),
    });
  });

  const invalid: Array<[string, object, RegExp]> = [
    ["a uid with a slash", { runUid: "a/b" }, /run_uid must match/],
    ["the uid ..", { runUid: ".." }, /run_uid/],
    ["attempt 0", { attempt: 0 }, /attempt must be >= 1/],
    ["an absolute working dir", { workingDir: "/etc" }, /relative to the workspace root/],
    ["a working dir that leaves the root", { workingDir: "a/../../x" }, /leaves the workspace root/],
    [
      "a tail above the maximum",
      { limits: { tailBytes: 2 ** 21 } },
      /limits.tail_bytes is 2097152, this server accepts at most 1048576/,
    ],
  ];
  for (const [name, init, message] of invalid) {
    test(`${name} is INVALID_ARGUMENT`, () => {
      let caught: unknown;
      try {
        toExecutionSpec(request({ program: { case: "inline", value: "x" }, ...init }), options, bashAdapter);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(RuntimeServerError);
      expect((caught as RuntimeServerError).reason).toBe("invalid_argument");
      expect((caught as RuntimeServerError).message).toMatch(message);
    });
  }
});
