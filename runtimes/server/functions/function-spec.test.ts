import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { RegisterRequestSchema } from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { FunctionLimits } from "../../../api/src/constants.ts";
import { RuntimeServerError } from "../errors.ts";
import { parseOptions } from "../options.ts";
import { toFunctionSpec } from "./function-spec.ts";

const options = parseOptions(["--workspace", "/ws", "--state-dir", "/state"], { PATH: "/bin", CONF: "c" }, 1);
const request = (more: object = {}) =>
  create(RegisterRequestSchema, {
    runUid: "uid-1",
    runName: "fn",
    attempt: 2,
    source: "x",
    handler: "h",
    ...more,
  });

describe("toFunctionSpec", () => {
  test("zero fields take the FunctionLimits defaults; the working dir is <run_uid>/fn", () => {
    const spec = toFunctionSpec(request({ env: { CONF: "run", KRUNTIME_ATTEMPT: "9" } }), options);
    expect(spec.limits).toEqual({
      concurrency: FunctionLimits.defaultConcurrency,
      queueLimit: FunctionLimits.defaultQueueLimit,
      maxRequestBytes: FunctionLimits.defaultMaxRequestBytes,
      maxResponseBytes: FunctionLimits.defaultMaxResponseBytes,
      invocationTimeoutMs: FunctionLimits.defaultInvocationTimeoutMs,
      idleTimeoutMs: 0,
    });
    expect(spec.cwd).toBe("/ws/runs/uid-1/fn");
    expect(spec.defaultCwd).toBe(true);
    expect(spec.env).toMatchObject({
      PATH: "/bin",
      CONF: "run",
      KRUNTIME_ATTEMPT: "2",
      KRUNTIME_RUN_UID: "uid-1",
    });
    expect(spec.stateDir.startsWith("/state/functions/uid-1.2.")).toBe(true);
    expect(spec.loadError).toBe("");
  });

  test("values above the maxima and caller mistakes are INVALID_ARGUMENT", () => {
    const invalid = (more: object) => {
      try {
        toFunctionSpec(request(more), options);
      } catch (error) {
        return error instanceof RuntimeServerError ? error.reason : "other";
      }
      return "accepted";
    };
    expect(invalid({ concurrency: FunctionLimits.maxConcurrency })).toBe("accepted");
    expect(invalid({ concurrency: FunctionLimits.maxConcurrency + 1 })).toBe("invalid_argument");
    expect(invalid({ maxRequestBytes: FunctionLimits.maxMaxRequestBytes + 1 })).toBe("invalid_argument");
    expect(invalid({ invocationTimeoutMs: FunctionLimits.maxInvocationTimeoutMs + 1 })).toBe(
      "invalid_argument",
    );
    expect(invalid({ runUid: "../x" })).toBe("invalid_argument");
    expect(invalid({ attempt: 0 })).toBe("invalid_argument");
    expect(invalid({ handler: "" })).toBe("invalid_argument");
    expect(invalid({ workingDir: "/abs" })).toBe("invalid_argument");
  });

  test("a malformed env is the Run's load error, not a call error", () => {
    expect(toFunctionSpec(request({ env: { "A=B": "x" } }), options).loadError).toContain("not valid");
  });
});
