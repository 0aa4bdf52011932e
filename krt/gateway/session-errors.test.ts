import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { ExitCode } from "../exit-codes.ts";
import { sessionError } from "./session-errors.ts";

const target = { namespace: "ns", run: "s1", via: "direct", path: "src" };

describe("sessionError", () => {
  test("a FAILED_PRECONDITION about a path is the path's error, not a Run that cannot serve", () => {
    const e = sessionError(new ConnectError("src is a directory", Code.FailedPrecondition), target);
    expect(e.exitCode).toBe(ExitCode.Conflict);
    expect(e.message).toBe("s1:src: src is a directory");
  });
  test("without a path it stays the gateway's precondition error", () => {
    const e = sessionError(new ConnectError("not ready", Code.FailedPrecondition), {
      ...target,
      path: undefined,
    });
    expect(e.exitCode).toBe(ExitCode.NotReady);
  });
});
