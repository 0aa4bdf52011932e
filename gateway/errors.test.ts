import { describe, expect, test } from "bun:test";
import { Code } from "@connectrpc/connect";
import {
  FailureSchema,
  HandlerErrorSchema,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { ERROR_TABLE, ErrorReason, GATEWAY_BODY_LIMIT_NEXT, GatewayError } from "./errors.ts";

describe("error table", () => {
  test.each([
    [ErrorReason.Unauthenticated, Code.Unauthenticated, 401],
    [ErrorReason.PermissionDenied, Code.PermissionDenied, 403],
    [ErrorReason.NotFound, Code.NotFound, 404],
    [ErrorReason.NotReady, Code.FailedPrecondition, 409],
    [ErrorReason.RequestTooLarge, Code.ResourceExhausted, 413],
    [ErrorReason.FunctionBusy, Code.ResourceExhausted, 429],
    [ErrorReason.GatewayBusy, Code.ResourceExhausted, 429],
    [ErrorReason.Unreachable, Code.Unavailable, 503],
    [ErrorReason.Deadline, Code.DeadlineExceeded, 504],
    [ErrorReason.HandlerError, Code.Unknown, 500],
  ])("%s → code %d, HTTP %d", (reason, code, http) => {
    expect(ERROR_TABLE[reason].code).toBe(code);
    expect(ERROR_TABLE[reason].http).toBe(http);
  });

  test("every row says what to do next", () => {
    for (const row of Object.values(ERROR_TABLE)) expect(row.next.length).toBeGreaterThan(10);
  });

  test("a busy error carries Retry-After and a Failure detail on both surfaces", async () => {
    const e = new GatewayError(ErrorReason.FunctionBusy, "queue full", { retryAfterSeconds: 3 });
    const ce = e.toConnectError();
    expect(ce.code).toBe(Code.ResourceExhausted);
    expect(ce.metadata.get("retry-after")).toBe("3");
    expect(ce.findDetails(FailureSchema)[0]?.retryAfterSeconds).toBe(3);
    const res = e.toResponse();
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await res.json()).toMatchObject({
      code: "resource_exhausted",
      reason: "REASON_FUNCTION_BUSY",
      retryAfterSeconds: 3,
    });
  });

  test("NotReady and HandlerError details", () => {
    const nr = new GatewayError(ErrorReason.NotReady, "x", {
      notReady: { phase: "Pending", mode: "function" },
    }).toConnectError();
    expect(nr.findDetails(RunNotReadySchema)[0]?.phase).toBe("Pending");
    const he = new GatewayError(ErrorReason.HandlerError, "x", {
      handlerError: { type: "ValueError", message: "m", traceback: "t", exitCode: 0, invocationId: "i" },
    }).toConnectError();
    expect(he.code).toBe(Code.Unknown);
    expect(he.findDetails(HandlerErrorSchema)[0]?.invocationId).toBe("i");
  });

  test("anything unknown is Internal", () => {
    expect(GatewayError.from(new Error("x")).reason).toBe(ErrorReason.Internal);
  });

  test("a body above the gateway's own limit is not advised to raise the Run's limit", () => {
    const run = new GatewayError(
      ErrorReason.RequestTooLarge,
      "the body has 9 bytes; run a/b accepts at most 8",
    );
    expect(run.fullMessage).toContain("raise spec.mode.function.maxRequestBytes");
    const own = new GatewayError(
      ErrorReason.RequestTooLarge,
      "the body has 9 bytes; this gateway accepts at most 8",
      {
        next: GATEWAY_BODY_LIMIT_NEXT,
      },
    );
    expect(own.fullMessage).not.toContain("spec.mode.function.maxRequestBytes");
    expect(own.fullMessage).toContain("gateway.limits.maxRequestBytes");
  });
});
