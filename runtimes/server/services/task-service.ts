/**
 * TaskService: Execute and Watch stream an execution's events to one subscriber each, List and
 * Cancel act on the registry. The execution never depends on a stream: a subscriber that goes
 * away (ctx.signal) only stops its own delivery.
 */
import { create } from "@bufbuild/protobuf";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type CancelRequest,
  CancelResponseSchema,
  type ExecuteRequest,
  type ExecuteResponse,
  ExecuteResponseSchema,
  type ListRequest,
  ListResponseSchema,
  TaskExecutionSchema,
  type TaskService,
  type WatchRequest,
  type WatchResponse,
  WatchResponseSchema,
} from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import type { LanguageAdapter } from "../adapter.ts";
import { RuntimeServerError } from "../errors.ts";
import type { ExecutionRegistry } from "../executions/registry.ts";
import type { Subscription } from "../executions/subscription.ts";
import type { ServerOptions } from "../options.ts";
import { toExecutionSpec } from "../task-request.ts";

export interface TaskServiceDeps {
  options: ServerOptions;
  adapter: LanguageAdapter;
  registry: ExecutionRegistry;
  draining(): boolean;
  /** Execute calls refused before anything started, by Connect code name. */
  refused(code: string): void;
  /** Counts open Execute/Watch streams, so a drain can let the last events reach their callers. */
  streams: { open: number };
}

export function taskService(deps: TaskServiceDeps): ServiceImpl<typeof TaskService> {
  const { options, adapter, registry } = deps;

  async function* deliver<T>(
    sub: Subscription,
    ctx: HandlerContext,
    wrap: (event: Parameters<Subscription["push"]>[0]) => T,
  ): AsyncGenerator<T> {
    deps.streams.open++;
    try {
      for await (const event of sub.iterate(ctx.signal)) yield wrap(event);
    } finally {
      deps.streams.open--;
    }
  }

  return {
    async *execute(req: ExecuteRequest, ctx: HandlerContext): AsyncGenerator<ExecuteResponse> {
      let sub: Subscription;
      try {
        if (deps.draining()) {
          throw new RuntimeServerError(
            "unavailable",
            "the runtime server is shutting down and takes no new executions",
          );
        }
        const execution = registry.create(toExecutionSpec(req, options, adapter));
        sub = execution.subscribe(false);
        execution.start();
      } catch (error) {
        const refusal = RuntimeServerError.toConnect(error);
        deps.refused(Code[refusal.code]);
        throw refusal;
      }
      yield* deliver(sub, ctx, (event) => create(ExecuteResponseSchema, { event }));
    },

    async *watch(req: WatchRequest, ctx: HandlerContext): AsyncGenerator<WatchResponse> {
      let sub: Subscription;
      try {
        sub = registry.get(req.runUid, req.attempt).subscribe(req.replayTails);
      } catch (error) {
        throw RuntimeServerError.toConnect(error);
      }
      yield* deliver(sub, ctx, (event) => create(WatchResponseSchema, { event }));
    },

    list(req: ListRequest) {
      const executions = registry.list(req.runUid).map((execution) =>
        create(TaskExecutionSchema, {
          runUid: execution.spec.runUid,
          attempt: execution.spec.attempt,
          runName: execution.spec.runName,
          state: execution.state,
          pid: execution.pid,
          startedAtMicros: BigInt(execution.startedAtMicros),
          finishedAtMicros: BigInt(execution.finishedAtMicros),
          reason: execution.reason,
        }),
      );
      return create(ListResponseSchema, { executions });
    },

    cancel(req: CancelRequest) {
      try {
        const execution = registry.get(req.runUid, req.attempt);
        const grace = req.force ? 0 : req.graceMs === 0 ? options.defaultGraceMs : req.graceMs;
        return create(CancelResponseSchema, { state: execution.cancel(grace, "cancelled") });
      } catch (error) {
        throw RuntimeServerError.toConnect(error);
      }
    },
  };
}
