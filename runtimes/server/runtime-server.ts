/**
 * RuntimeServer wires the parts together: the language adapter, the warm pool, the execution
 * registry, the Connect services and the Unix socket listener. `drain()` is the SIGTERM path:
 * Health turns DRAINING and new executions are refused, running ones go on until they end or
 * the drain timeout stops them, the last events reach their streams, then the socket goes.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { FunctionService, type InvokeRequest } from "../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { InfoResponseSchema, Mode, RuntimeService } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { SessionService } from "../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { TaskService, TaskState } from "../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { connectFetchHandler } from "./connect-handler.ts";
import { ExecutionRegistry } from "./executions/registry.ts";
import { FunctionRegistry } from "./functions/function-registry.ts";
import { fastPathEligible, INVOKE_PATH, serveInvokeFast } from "./functions/invoke-fast-path.ts";
import { adapters, interpreterVersion, warmUnsupported } from "./languages.ts";
import { Launcher } from "./launcher.ts";
import type { Logger } from "./logger.ts";
import { createMetrics, type ServerMetrics } from "./metrics.ts";
import type { ServerOptions } from "./options.ts";
import { removeDirectory } from "./remove-directory.ts";
import { functionService, invokeConnectError, invokeFunction } from "./services/function-service.ts";
import { runtimeService } from "./services/runtime-service.ts";
import { sessionService } from "./services/session-service.ts";
import { taskService } from "./services/task-service.ts";
import { createSessionMetrics } from "./sessions/session-metrics.ts";
import { SessionRegistry } from "./sessions/session-registry.ts";
import { openSocketToAll, prepareSocketPath, removeSocket } from "./unix-socket.ts";
import { SERVER_VERSION } from "./version.ts";
import { WarmPool } from "./warm/warm-pool.ts";

/** Bytes one stream subscriber may lag before the Run's pipes stop being read. */
const HIGH_WATER_BYTES = 1024 * 1024;
/** How long output may keep flowing after the main process exited (escaped children). */
const PIPE_DRAIN_MS = 500;
/** Grace given to executions still running when the drain timeout is over. */
const DRAIN_CANCEL_GRACE_MS = 2000;
/** How long the last events may take to reach open streams after the last execution ended. */
const STREAM_FLUSH_MS = 2000;

export class RuntimeServer {
  private draining = false;
  private drained: Promise<void> | undefined;
  private readonly streams = { open: 0 };
  private readonly registry: ExecutionRegistry;
  private readonly sessions: SessionRegistry;
  private readonly functions: FunctionRegistry;
  private readonly pool: WarmPool | undefined;
  private readonly metrics: ServerMetrics;
  private server: ReturnType<typeof Bun.serve> | undefined;
  private metricsServer: ReturnType<typeof Bun.serve> | undefined;

  private constructor(
    private readonly options: ServerOptions,
    private readonly logger: Logger,
    private readonly interpreterVersion: string,
  ) {
    const adapter = adapters[options.language];
    const launcher = new Launcher({
      adapter,
      interpreter: options.interpreter,
      baseEnv: options.baseEnv,
      idleCwd: options.stateDir,
    });
    if (options.warmPoolSize > 0) {
      this.pool = new WarmPool(options.warmPoolSize, launcher.spawnWarm, logger.child({ part: "warm-pool" }));
      launcher.pool = this.pool;
    }
    this.metrics = createMetrics({
      running: () => this.registry.running,
      warmReady: () => this.pool?.ready ?? 0,
      functions: () => this.functionLoad(),
    });
    this.functions = new FunctionRegistry(options, {
      functions: adapter.functions,
      logger: logger.child({ part: "functions" }),
      invoked: (result, durationMs) => this.metrics.invoked(result, durationMs),
    });
    this.sessions = new SessionRegistry({ options, logger: logger.child({ part: "sessions" }) });
    this.registry = new ExecutionRegistry(
      options,
      {
        adapter,
        launcher,
        logger,
        highWaterBytes: HIGH_WATER_BYTES,
        drainMs: PIPE_DRAIN_MS,
        observer: this.metrics,
      },
      logger,
    );
  }

  /** Checks the interpreter, prepares the directories and the socket, and starts serving. */
  static async start(given: ServerOptions, logger: Logger): Promise<RuntimeServer> {
    const adapter = adapters[given.language];
    const version = interpreterVersion(adapter, given.interpreter);
    const cannotWarm = given.warmPoolSize > 0 ? warmUnsupported(given.language, version) : undefined;
    if (cannotWarm !== undefined)
      logger.warn({ interpreterVersion: version }, `warm pool disabled: ${cannotWarm}`);
    const options = cannotWarm === undefined ? given : { ...given, warmPoolSize: 0 };
    // Per-execution directories go under executions/: one mkdir each on the critical path.
    mkdirSync(join(options.stateDir, "executions"), { recursive: true });
    mkdirSync(options.workspaceRoot, { recursive: true });
    await prepareSocketPath(options.socketPath);
    const server = new RuntimeServer(options, logger, version);
    server.listen();
    void server.pool?.start();
    logger.info(
      {
        socket: options.socketPath,
        language: options.language,
        interpreter: options.interpreter,
        interpreterVersion: version,
        warmPool: options.warmPoolSize,
        maxConcurrent: options.maxConcurrent,
        workspaceRoot: options.workspaceRoot,
      },
      "serving",
    );
    return server;
  }

  /** Working directories of executions still running and registrations not ended. */
  private *busyDirectories(): Iterable<string> {
    for (const x of this.registry.list("")) if (x.state !== TaskState.EXITED) yield x.spec.cwd;
    for (const r of this.functions.list()) if (!r.terminal) yield r.spec.cwd;
  }

  private listen(): void {
    const { options } = this;
    const adapter = adapters[options.language];
    const info = create(InfoResponseSchema, {
      serverVersion: SERVER_VERSION,
      language: options.language,
      interpreter: options.interpreter,
      interpreterVersion: this.interpreterVersion,
      modes: [Mode.TASK, Mode.FUNCTION, Mode.SESSION],
      taskInputs: [...adapter.inputs],
      limits: { ...options.limits },
      maxConcurrent: options.maxConcurrent,
      warmPoolSize: options.warmPoolSize,
      workspaceRoot: options.workspaceRoot,
      defaultGraceMs: options.defaultGraceMs,
      retainFinishedMs: options.retainFinishedMs,
      runtimeName: options.runtimeName,
    });
    const fetch = connectFetchHandler((router) => {
      router.service(
        RuntimeService,
        runtimeService({
          info,
          draining: () => this.draining,
          running: () => this.registry.running,
          warmReady: () => this.pool?.ready ?? 0,
          removeDirectory: (path) => removeDirectory(options.workspaceRoot, path, this.busyDirectories()),
        }),
      );
      router.service(
        TaskService,
        taskService({
          options,
          adapter,
          registry: this.registry,
          draining: () => this.draining,
          refused: (code) => this.metrics.refused(code),
          streams: this.streams,
        }),
      );
      router.service(
        FunctionService,
        functionService({ registry: this.functions, draining: () => this.draining, streams: this.streams }),
      );
      router.service(
        SessionService,
        sessionService({
          registry: this.sessions,
          draining: () => this.draining,
          metrics: createSessionMetrics(this.metrics.registry, () => this.sessions.openCount),
          streams: this.streams,
        }),
      );
    });
    const metrics = async (): Promise<Response> =>
      new Response(await this.metrics.registry.metrics(), {
        headers: { "Content-Type": this.metrics.registry.contentType },
      });
    const rpc = fetch;
    const invoke = (req: InvokeRequest, signal: AbortSignal) => invokeFunction(this.functions, req, signal);
    const handle = (request: Request): Promise<Response> => {
      const path = new URL(request.url).pathname;
      if (path === INVOKE_PATH && fastPathEligible(request))
        return serveInvokeFast(request, invoke, invokeConnectError);
      return request.method === "GET" && path === "/metrics" ? metrics() : rpc(request);
    };
    this.server = Bun.serve({
      unix: options.socketPath,
      // Streams last as long as their executions and may be silent for long: no idle timeout
      // (Bun's default of 10 s applies to unix sockets too, though its types omit the option).
      ...({ idleTimeout: 0 } as object),
      fetch: handle,
      error: (error) => {
        this.logger.error({ err: error }, "request failed");
        return new Response("internal error\n", { status: 500 });
      },
    });
    openSocketToAll(options.socketPath);
    if (options.metricsPort > 0) {
      this.metricsServer = Bun.serve({
        port: options.metricsPort,
        fetch: (request) =>
          new URL(request.url).pathname === "/metrics"
            ? metrics()
            : new Response("see /metrics\n", { status: 404 }),
      });
    }
  }

  private functionLoad(): { registrations: number; inFlight: number; queued: number } {
    const load = { registrations: 0, inFlight: 0, queued: 0 };
    for (const r of this.functions.list()) {
      if (r.terminal) continue;
      load.registrations++;
      load.inFlight += r.inFlight;
      load.queued += r.toProto().queued;
    }
    return load;
  }

  /** SIGTERM: stop taking work, let running executions end (bounded), then close. Idempotent. */
  drain(): Promise<void> {
    this.drained ??= this.runDrain();
    return this.drained;
  }

  private async runDrain(): Promise<void> {
    const { options, logger, registry } = this;
    this.draining = true;
    this.pool?.close();
    logger.info(
      { running: registry.running, functions: this.functions.active, drainTimeoutMs: options.drainTimeoutMs },
      "draining",
    );
    const functionsDrained = this.functions.drainAll(options.drainTimeoutMs);
    if (!(await within(registry.idle(), options.drainTimeoutMs))) {
      logger.warn({ running: registry.running }, "drain timeout: stopping the executions still running");
      registry.cancelAll(
        Math.min(DRAIN_CANCEL_GRACE_MS, options.defaultGraceMs),
        `the runtime server shut down; the execution did not end within the ${options.drainTimeoutMs} ms drain timeout`,
      );
      await within(registry.idle(), DRAIN_CANCEL_GRACE_MS + 1000);
    }
    await functionsDrained;
    const flushUntil = Date.now() + STREAM_FLUSH_MS;
    while (this.streams.open > 0 && Date.now() < flushUntil) await Bun.sleep(10);
    await this.close();
    logger.info({}, "drained");
  }

  /** Stops listening at once and removes the socket and private files (running work is not waited for). */
  async close(): Promise<void> {
    this.draining = true;
    this.pool?.close();
    this.registry.close();
    await this.sessions.closeAll();
    this.functions.close();
    await this.server?.stop(true);
    await this.metricsServer?.stop(true);
    removeSocket(this.options.socketPath);
    rmSync(this.options.stateDir, { recursive: true, force: true });
  }
}

async function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([promise.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}
