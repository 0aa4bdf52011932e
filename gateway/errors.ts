/**
 * The gateway's one error type and its table. Every refusal is a `GatewayError` with a reason from
 * a closed set; the table maps each reason to its Connect code, its HTTP status on the plain
 * invoke route, its `Failure.Reason` detail, a default Retry-After and a message that says what to
 * do next. Connect, gRPC and gRPC-Web carry the code (their HTTP status is the protocol's own);
 * the plain route answers with the table's status.
 */
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Failure_Reason,
  FailureSchema,
  type HandlerError,
  HandlerErrorSchema,
  RunNotReadySchema,
} from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";

export const ErrorReason = {
  Unauthenticated: "Unauthenticated",
  PermissionDenied: "PermissionDenied",
  InvalidArgument: "InvalidArgument",
  NotFound: "NotFound",
  NotReady: "NotReady",
  RequestTooLarge: "RequestTooLarge",
  ResponseTooLarge: "ResponseTooLarge",
  FunctionBusy: "FunctionBusy",
  SessionBusy: "SessionBusy",
  GatewayBusy: "GatewayBusy",
  Unreachable: "Unreachable",
  WorkerCrashed: "WorkerCrashed",
  AuthUnavailable: "AuthUnavailable",
  Deadline: "Deadline",
  Cancelled: "Cancelled",
  HandlerError: "HandlerError",
  Internal: "Internal",
} as const;
export type ErrorReason = (typeof ErrorReason)[keyof typeof ErrorReason];

interface Row {
  code: Code;
  /** HTTP status of the plain invoke route. */
  http: number;
  failure?: Failure_Reason;
  /** Retry-After (seconds) when the error does not carry its own. */
  retryAfter?: number;
  /** What the caller should do, appended to the specific message. */
  next: string;
}

/** The table: one row per reason. docs/concepts/gateway.md renders it (see gateway/README.md). */
export const ERROR_TABLE: Record<ErrorReason, Row> = {
  Unauthenticated: {
    code: Code.Unauthenticated,
    http: 401,
    next: "send a Kubernetes bearer token: Authorization: Bearer $(kubectl create token <serviceaccount>)",
  },
  PermissionDenied: {
    code: Code.PermissionDenied,
    http: 403,
    next: "ask for a Role granting verb create on resource runs/invoke (functions) or runs/session (sessions) for this Run",
  },
  InvalidArgument: { code: Code.InvalidArgument, http: 400, next: "fix the request" },
  NotFound: { code: Code.NotFound, http: 404, next: "check the namespace and Run name (krt list)" },
  NotReady: {
    code: Code.FailedPrecondition,
    http: 409,
    next: "wait until the Run is Ready (krt get), or create a new Run of that mode if it has finished",
  },
  RequestTooLarge: {
    code: Code.ResourceExhausted,
    http: 413,
    failure: Failure_Reason.REQUEST_TOO_LARGE,
    next: "send a smaller body, or raise spec.mode.function.maxRequestBytes",
  },
  ResponseTooLarge: {
    code: Code.ResourceExhausted,
    http: 502,
    failure: Failure_Reason.RESPONSE_TOO_LARGE,
    next: "return a smaller body, or raise spec.mode.function.maxResponseBytes",
  },
  FunctionBusy: {
    code: Code.ResourceExhausted,
    http: 429,
    failure: Failure_Reason.FUNCTION_BUSY,
    retryAfter: 1,
    next: "retry after Retry-After, or raise spec.mode.function.concurrency",
  },
  SessionBusy: {
    code: Code.ResourceExhausted,
    http: 429,
    retryAfter: 1,
    next: "retry after Retry-After; the session's operation queue is full (spec.mode.session.maxQueuedOperations)",
  },
  GatewayBusy: {
    code: Code.ResourceExhausted,
    http: 429,
    failure: Failure_Reason.GATEWAY_BUSY,
    retryAfter: 1,
    next: "retry after Retry-After; the gateway is at --max-concurrent-requests",
  },
  Unreachable: {
    code: Code.Unavailable,
    http: 503,
    failure: Failure_Reason.UNREACHABLE,
    retryAfter: 1,
    next: "retry after Retry-After; the Run is being moved or its pod is not reachable yet",
  },
  WorkerCrashed: {
    code: Code.Unavailable,
    http: 503,
    failure: Failure_Reason.WORKER_CRASHED,
    retryAfter: 1,
    next: "retry after Retry-After; the worker is being replaced (see krt logs for why it died)",
  },
  AuthUnavailable: {
    code: Code.Unavailable,
    http: 503,
    retryAfter: 1,
    next: "retry after Retry-After; the gateway could not reach the Kubernetes API to check the token",
  },
  Deadline: {
    code: Code.DeadlineExceeded,
    http: 504,
    failure: Failure_Reason.DEADLINE,
    next: "allow more time (Connect-Timeout-Ms / grpc-timeout, up to the Run's invocationTimeout) or make the handler faster",
  },
  Cancelled: {
    code: Code.Unavailable,
    http: 503,
    failure: Failure_Reason.UNREACHABLE,
    next: "the Run ended during the call; check its phase (krt get)",
  },
  HandlerError: {
    code: Code.Unknown,
    http: 500,
    next: "the handler raised or exited non-zero; see the HandlerError detail and krt logs",
  },
  Internal: { code: Code.Internal, http: 500, next: "see the gateway's log" },
};

export interface GatewayErrorInit {
  retryAfterSeconds?: number;
  /** RunNotReady detail (NotReady). */
  notReady?: { phase: string; mode: string };
  /** HandlerError detail (HandlerError). */
  handlerError?: Omit<HandlerError, "$typeName" | "$unknown">;
  /** What to do next, when this case needs other advice than the table's row. */
  next?: string;
  cause?: unknown;
}

/** The advice for a body above the gateway's own limit: no Run setting can raise it. */
export const GATEWAY_BODY_LIMIT_NEXT =
  "send a smaller body: this is the gateway's own ceiling (its --max-request-bytes, chart value gateway.limits.maxRequestBytes), which no Run setting can raise; session files can be uploaded in chunks (krt cp)";

export class GatewayError extends Error {
  override name = "GatewayError";
  readonly retryAfterSeconds: number;

  constructor(
    readonly reason: ErrorReason,
    message: string,
    readonly init: GatewayErrorInit = {},
  ) {
    super(message, { cause: init.cause });
    this.retryAfterSeconds = init.retryAfterSeconds ?? ERROR_TABLE[reason].retryAfter ?? 0;
  }

  get row(): Row {
    return ERROR_TABLE[this.reason];
  }

  /** The message the caller sees: what happened, then what to do. */
  get fullMessage(): string {
    return `${this.message}: ${this.init.next ?? this.row.next}`;
  }

  /** Any error as a GatewayError (unknown ones are Internal). */
  static from(e: unknown): GatewayError {
    if (e instanceof GatewayError) return e;
    return new GatewayError(ErrorReason.Internal, e instanceof Error ? e.message : String(e), { cause: e });
  }

  /** The details this error carries, as protobuf messages. */
  details(): { desc: DescMessage; value: MessageShape<DescMessage> }[] {
    const out: { desc: DescMessage; value: MessageShape<DescMessage> }[] = [];
    const row = this.row;
    if (row.failure !== undefined) {
      out.push({
        desc: FailureSchema,
        value: create(FailureSchema, { reason: row.failure, retryAfterSeconds: this.retryAfterSeconds }),
      });
    }
    if (this.init.notReady)
      out.push({ desc: RunNotReadySchema, value: create(RunNotReadySchema, this.init.notReady) });
    if (this.init.handlerError) {
      out.push({ desc: HandlerErrorSchema, value: create(HandlerErrorSchema, this.init.handlerError) });
    }
    return out;
  }

  /** For Connect, gRPC and gRPC-Web: code, message, details, Retry-After as metadata. */
  toConnectError(): ConnectError {
    const metadata = new Headers();
    if (this.retryAfterSeconds > 0) metadata.set("retry-after", String(this.retryAfterSeconds));
    const details = this.details().map((d) => ({ desc: d.desc, value: d.value }));
    return new ConnectError(this.fullMessage, this.row.code, metadata, details as never, this.cause);
  }

  /** For the plain route: the table's status, a JSON body, Retry-After. */
  toResponse(): Response {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.retryAfterSeconds > 0) headers["retry-after"] = String(this.retryAfterSeconds);
    return new Response(JSON.stringify(this.toJson()), { status: this.row.http, headers });
  }

  toJson(): Record<string, unknown> {
    const row = this.row;
    return {
      code: codeName(row.code),
      reason: row.failure !== undefined ? `REASON_${Failure_Reason[row.failure]}` : this.reason,
      message: this.fullMessage,
      ...(this.retryAfterSeconds > 0 ? { retryAfterSeconds: this.retryAfterSeconds } : {}),
      ...(this.init.notReady ? { runNotReady: this.init.notReady } : {}),
      ...(this.init.handlerError ? { handlerError: this.init.handlerError } : {}),
    };
  }
}

/** Connect's snake_case code name ("failed_precondition"), as in Connect JSON errors. */
export function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}
