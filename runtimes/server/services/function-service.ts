/**
 * FunctionService: Register/Status/List/Unregister act on the function registry; Invoke calls a
 * registration's handler (failures as Connect errors with an InvokeFailure detail, handler errors
 * in the response); Watch streams a registration's state, logs and end.
 */
import { create } from "@bufbuild/protobuf";
import type { ConnectError, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  FunctionEndReason,
  type FunctionService,
  FunctionServiceListResponseSchema,
  type FunctionServiceWatchRequest,
  type FunctionServiceWatchResponse,
  type InvokeRequest,
  type InvokeResponse,
  InvokeFailure_Reason as Reason,
  RegisterResponseSchema,
  StatusResponseSchema,
  UnregisterMode,
  UnregisterResponseSchema,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { RuntimeServerError } from "../errors.ts";
import { type FunctionRegistry, stale } from "../functions/function-registry.ts";
import { InvokeError } from "../functions/invoke-error.ts";
import type { WatchStream } from "../functions/watch-stream.ts";

export interface FunctionServiceDeps {
  registry: FunctionRegistry;
  draining(): boolean;
  /** Counts open Watch streams, so a drain can let the last events reach their callers. */
  streams: { open: number };
}

const invocationIdPattern = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * One Invoke: the fence and field checks, then the registration's handler. Throws InvokeError
 * (or RuntimeServerError); shared by the Connect router and the binary fast path.
 */
export async function invokeFunction(
  registry: FunctionRegistry,
  req: InvokeRequest,
  signal: AbortSignal,
): Promise<InvokeResponse> {
  if (!invocationIdPattern.test(req.invocationId)) {
    throw new InvokeError(
      Reason.INVALID,
      `invocation_id must match ${invocationIdPattern.source}, got ${JSON.stringify(req.invocationId)}`,
    );
  }
  const registration = registry.find(req.runUid);
  if (registration === undefined) {
    throw new InvokeError(Reason.NOT_REGISTERED, `no function registration for run ${req.runUid}`);
  }
  if (req.attempt !== registration.attempt) {
    throw new InvokeError(
      Reason.STALE,
      `attempt ${req.attempt} does not match the registered attempt ${registration.attempt}`,
    );
  }
  return registration.invoke(
    {
      invocationId: req.invocationId,
      body: req.body,
      contentType: req.contentType === "" ? "application/octet-stream" : req.contentType,
      headers: req.headers,
    },
    req.timeoutMs,
    signal,
  );
}

/** An Invoke failure as the Connect error the caller gets. */
export function invokeConnectError(error: unknown): ConnectError {
  if (error instanceof InvokeError) return error.toConnectError();
  return RuntimeServerError.toConnect(error);
}

export function functionService(deps: FunctionServiceDeps): ServiceImpl<typeof FunctionService> {
  const { registry } = deps;

  return {
    async register(req) {
      try {
        if (deps.draining()) {
          throw new RuntimeServerError(
            "unavailable",
            "the runtime server is shutting down and takes no new functions",
          );
        }
        const { registration, created } = await registry.register(req);
        return create(RegisterResponseSchema, { registration: registration.toProto(), created });
      } catch (error) {
        throw RuntimeServerError.toConnect(error);
      }
    },

    status(req) {
      try {
        return create(StatusResponseSchema, { registration: registry.get(req.runUid).toProto() });
      } catch (error) {
        throw RuntimeServerError.toConnect(error);
      }
    },

    list() {
      return create(FunctionServiceListResponseSchema, {
        registrations: registry.list().map((r) => r.toProto()),
      });
    },

    async invoke(req, ctx) {
      try {
        return await invokeFunction(registry, req, ctx.signal);
      } catch (error) {
        throw invokeConnectError(error);
      }
    },

    async unregister(req) {
      try {
        const registration = registry.get(req.runUid);
        if (req.attempt < registration.attempt) throw stale(req.attempt, registration.attempt);
        const cancel = req.mode === UnregisterMode.CANCEL;
        const drainMs =
          req.drainTimeoutMs === 0 ? registration.spec.limits.invocationTimeoutMs : req.drainTimeoutMs;
        await registration.unregister(
          !cancel,
          drainMs,
          cancel ? FunctionEndReason.CANCELLED : FunctionEndReason.DRAINED,
        );
        return create(UnregisterResponseSchema, { registration: registration.toProto() });
      } catch (error) {
        throw RuntimeServerError.toConnect(error);
      }
    },

    async *watch(
      req: FunctionServiceWatchRequest,
      ctx: HandlerContext,
    ): AsyncGenerator<FunctionServiceWatchResponse> {
      let stream: WatchStream;
      try {
        const registration = registry.get(req.runUid);
        if (req.attempt !== 0 && req.attempt < registration.attempt)
          throw stale(req.attempt, registration.attempt);
        if (req.attempt > registration.attempt) {
          throw new RuntimeServerError(
            "not_found",
            `attempt ${req.attempt} of run ${req.runUid} is not registered`,
          );
        }
        stream = registration.watch();
      } catch (error) {
        throw RuntimeServerError.toConnect(error);
      }
      deps.streams.open++;
      try {
        yield* stream.iterate(ctx.signal);
      } finally {
        deps.streams.open--;
      }
    },
  };
}
