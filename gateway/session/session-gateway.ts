/**
 * One session call, the same for every surface (Connect, gRPC, gRPC-Web on every listener, and the
 * plain file routes): take a slot under the concurrency bound, authorize the caller for `create
 * runs/session` on the Run, find the pod serving the session (a Ready Run of mode session), check
 * the request against the gateway's bounds, and forward the call to that pod's runtimed, which
 * serves the same `kruntimes.gateway.v1.SessionService`, with the fence and the caller's username
 * in headers. A refused fence or an unreachable pod re-resolves the route once (for a stream: only
 * while nothing has been received yet). Streams (Exec, ReadFile) are passed on message by message
 * as runtimed sends them; nothing is buffered whole.
 *
 * Deadline: the caller's (Connect-Timeout-Ms / grpc-timeout), else --max-timeout — a session
 * operation is bounded by the Run's own operation timeout, which runtimed enforces.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import type { SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import type { Logger } from "pino";
import type { Authorizer } from "../auth/authorizer.ts";
import { codeName, ErrorReason, GatewayError } from "../errors.ts";
import type { ConcurrencyLimit } from "../limits/concurrency.ts";
import { requestedTimeoutMs } from "../limits/deadline.ts";
import type { Metrics, Protocol } from "../metrics.ts";
import type { Route } from "../routing/route.ts";
import type { RouteTable } from "../routing/route-table.ts";
import type { RawStreamHost } from "./raw-stream.ts";
import type { SessionClient, SessionDataplane } from "./session-client.ts";
import { classifySessionError } from "./session-errors.ts";

export const SESSION_SERVICE = "kruntimes.gateway.v1.SessionService";
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export type UnaryMethod =
  | "cancelOperation"
  | "startProcess"
  | "signalProcess"
  | "waitProcess"
  | "listProcesses"
  | "writeFile"
  | "stat"
  | "makeDir"
  | "remove"
  | "rename"
  | "listFiles";
export type StreamMethod = "exec" | "readFile";

type Req<M extends UnaryMethod | StreamMethod> = MessageInitShape<
  (typeof SessionService)["method"][M]["input"]
>;
type UnaryRes<M extends UnaryMethod> = Awaited<ReturnType<SessionClient[M]>>;
type StreamRes<M extends StreamMethod> =
  ReturnType<SessionClient[M]> extends AsyncIterable<infer T> ? T : never;

type Targeted = { target?: { namespace: string; run: string } };

/** What every call carries besides its message. */
export interface SessionCallContext {
  authorization: string | null | undefined;
  requestedTimeoutMs: number | undefined;
  protocol: Protocol;
  signal?: AbortSignal;
}

export interface SessionGatewayDeps {
  limit: ConcurrencyLimit;
  authorizer: Authorizer;
  routes: RouteTable;
  dataplane: SessionDataplane;
  metrics: Metrics;
  log: Logger;
  /** Largest WriteFile chunk and Exec stdin (--max-request-bytes). */
  maxRequestBytes: number;
  /** Largest streamed chunk passed on (--max-response-bytes). */
  maxResponseBytes: number;
  maxTimeoutMs: number;
}

interface Prepared {
  route: Route;
  caller: string;
  signal: AbortSignal;
  timeout: AbortSignal;
  deadline: number;
  timeoutMs: number;
}

const METHOD_NAME: Record<UnaryMethod | StreamMethod, string> = {
  exec: "Exec",
  readFile: "ReadFile",
  cancelOperation: "CancelOperation",
  startProcess: "StartProcess",
  signalProcess: "SignalProcess",
  waitProcess: "WaitProcess",
  listProcesses: "ListProcesses",
  writeFile: "WriteFile",
  stat: "Stat",
  makeDir: "MakeDir",
  remove: "Remove",
  rename: "Rename",
  listFiles: "ListFiles",
};

export class SessionGateway implements RawStreamHost {
  constructor(private readonly d: SessionGatewayDeps) {}

  /** Largest WriteFile chunk accepted (--max-request-bytes). */
  get maxChunkBytes(): number {
    return this.d.maxRequestBytes;
  }

  /** A unary call, forwarded; resolves with runtimed's answer. */
  async unary<M extends UnaryMethod>(method: M, req: Req<M>, ctx: SessionCallContext): Promise<UnaryRes<M>> {
    const t0 = performance.now();
    let code = "ok";
    let release: (() => void) | undefined;
    try {
      release = this.acquire();
      const p = await this.prepare(method, req as Targeted, ctx);
      for (let attempt = 0; ; attempt++) {
        try {
          const call = this.d.dataplane.client(p.route.address)[method] as unknown as (
            r: Req<M>,
            o: object,
          ) => Promise<UnaryRes<M>>;
          return await this.timed(() => call(req, this.callOptions(p)));
        } catch (e) {
          await this.retryOrThrow(e, p, attempt);
        }
      }
    } catch (e) {
      code = this.failed(e, method, req as Targeted);
      throw e;
    } finally {
      this.done(release, method, ctx.protocol, code, t0);
    }
  }

  /** A server-streaming call, forwarded message by message. */
  async *stream<M extends StreamMethod>(
    method: M,
    req: Req<M>,
    ctx: SessionCallContext,
  ): AsyncGenerator<StreamRes<M>> {
    const t0 = performance.now();
    let code = "ok";
    let release: (() => void) | undefined;
    try {
      release = this.acquire();
      const p = await this.prepare(method, req as Targeted, ctx);
      for (let attempt = 0; ; attempt++) {
        let received = false;
        try {
          const call = this.d.dataplane.client(p.route.address)[method] as unknown as (
            r: Req<M>,
            o: object,
          ) => AsyncIterable<StreamRes<M>>;
          const t1 = performance.now();
          for await (const msg of call(req, this.callOptions(p))) {
            if (!received) this.d.metrics.dataplaneDuration.observe((performance.now() - t1) / 1000);
            received = true;
            this.checkResponse(msg as never);
            yield msg;
          }
          return;
        } catch (e) {
          if (received) {
            if (p.timeout.aborted)
              throw new GatewayError(ErrorReason.Deadline, `no end within ${p.timeoutMs} ms`);
            const f = classifySessionError(e);
            if (f.kind === "error") throw f.error;
            throw new GatewayError(ErrorReason.Unreachable, `the stream from runtimed broke (${f.why})`, {
              cause: e,
            });
          }
          await this.retryOrThrow(e, p, attempt);
        }
      }
    } catch (e) {
      code = this.failed(e, method, req as Targeted);
      throw e;
    } finally {
      this.done(release, method, ctx.protocol, code, t0);
    }
  }

  /** For the Connect pass-through of Exec/ReadFile (raw-stream.ts): authorize, bound, route. */
  async open(method: StreamMethod, req: object, request: Request) {
    const ctx: SessionCallContext = {
      authorization: request.headers.get("authorization"),
      requestedTimeoutMs: requestedTimeoutMs(request.headers),
      protocol: "connect",
      signal: request.signal,
    };
    const t0 = performance.now();
    const release = this.acquire();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      release();
      this.d.metrics.inFlight.dec();
    };
    try {
      const p = await this.prepare(method, req as Targeted, ctx);
      const o = this.callOptions(p);
      return {
        url: `http://${p.route.address}/${SESSION_SERVICE}/${METHOD_NAME[method]}`,
        headers: {
          ...o.headers,
          "content-type": "application/connect+proto",
          "connect-protocol-version": "1",
          "connect-timeout-ms": String(o.timeoutMs),
        },
        signal: p.signal,
        done: (code: string, firstFrameMs?: number) => {
          if (ended) return;
          end();
          // "abandoned": handed to the router path, which counts the call itself.
          if (code === "abandoned") return;
          if (firstFrameMs !== undefined) this.d.metrics.dataplaneDuration.observe(firstFrameMs / 1000);
          const labels = { service: SESSION_SERVICE, method: METHOD_NAME[method], protocol: ctx.protocol };
          this.d.metrics.requests.inc({ ...labels, code });
          this.d.metrics.duration.observe(labels, (performance.now() - t0) / 1000);
        },
      };
    } catch (e) {
      end();
      throw e;
    }
  }

  private acquire(): () => void {
    const release = this.d.limit.acquire();
    this.d.metrics.inFlight.inc();
    return release;
  }

  private done(
    release: (() => void) | undefined,
    method: UnaryMethod | StreamMethod,
    protocol: Protocol,
    code: string,
    t0: number,
  ) {
    if (release) {
      release();
      this.d.metrics.inFlight.dec();
    }
    const labels = { service: SESSION_SERVICE, method: METHOD_NAME[method], protocol };
    this.d.metrics.requests.inc({ ...labels, code });
    this.d.metrics.duration.observe(labels, (performance.now() - t0) / 1000);
  }

  private failed(e: unknown, method: string, req: { target?: { namespace: string; run: string } }): string {
    if (e instanceof ConnectError) return codeName(e.code);
    const err = GatewayError.from(e);
    if (err.reason === ErrorReason.Internal) {
      this.d.log.error(
        { err: e, method, namespace: req.target?.namespace, run: req.target?.run },
        "session call failed",
      );
    }
    return codeName(err.row.code);
  }

  private async prepare(
    method: UnaryMethod | StreamMethod,
    req: { target?: { namespace: string; run: string } },
    ctx: SessionCallContext,
  ): Promise<Prepared> {
    const namespace = req.target?.namespace ?? "";
    const run = req.target?.run ?? "";
    if (!NAME.test(namespace) || !NAME.test(run)) {
      throw new GatewayError(
        ErrorReason.InvalidArgument,
        "target.namespace and target.run must be Kubernetes object names",
      );
    }
    const caller = await this.d.authorizer.authorize(ctx.authorization, {
      namespace,
      name: run,
      subresource: "session",
    });
    this.checkSize(method, req);
    const route = await this.d.routes.resolve(namespace, run, "session");
    const want =
      ctx.requestedTimeoutMs === undefined
        ? this.d.maxTimeoutMs
        : Math.max(1, Math.ceil(ctx.requestedTimeoutMs));
    const timeoutMs = Math.min(want, this.d.maxTimeoutMs);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
    return { route, caller, signal, timeout, deadline: performance.now() + timeoutMs, timeoutMs };
  }

  private checkSize(method: UnaryMethod | StreamMethod, req: object): void {
    const max = this.d.maxRequestBytes;
    const bytes =
      method === "writeFile"
        ? ((req as { data?: Uint8Array }).data?.byteLength ?? 0)
        : method === "exec"
          ? ((req as { stdin?: Uint8Array }).stdin?.byteLength ?? 0)
          : 0;
    if (bytes > max) {
      throw new GatewayError(
        ErrorReason.RequestTooLarge,
        `the ${method === "exec" ? "stdin" : "chunk"} has ${bytes} bytes; this gateway accepts at most ${max} per call (split an upload into WriteFile chunks sharing one upload_id)`,
      );
    }
  }

  /** A streamed chunk above --max-response-bytes is refused (runtimed's chunks are far smaller). */
  private checkResponse(msg: { data?: Uint8Array; event?: { case?: string; value?: unknown } }): void {
    const data =
      msg.data ??
      (msg.event?.case === "output" ? (msg.event.value as { data?: Uint8Array }).data : undefined);
    if (data && data.byteLength > this.d.maxResponseBytes) {
      throw new GatewayError(
        ErrorReason.ResponseTooLarge,
        `runtimed sent a chunk of ${data.byteLength} bytes; this gateway passes at most ${this.d.maxResponseBytes} per message`,
      );
    }
  }

  private callOptions(p: Prepared) {
    return {
      headers: this.d.dataplane.headers(p.route, p.caller),
      signal: p.signal,
      timeoutMs: Math.max(1, Math.ceil(p.deadline - performance.now())),
    };
  }

  private async timed<T>(f: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      this.d.metrics.dataplaneDuration.observe((performance.now() - t0) / 1000);
    }
  }

  /** After a failed attempt: re-resolve the route once (updating `p.route`) or throw. */
  private async retryOrThrow(e: unknown, p: Prepared, attempt: number): Promise<void> {
    if (p.timeout.aborted) throw new GatewayError(ErrorReason.Deadline, `no answer within ${p.timeoutMs} ms`);
    const f = classifySessionError(e);
    if (f.kind === "error") throw f.error;
    const who = `${p.route.namespace}/${p.route.name}`;
    if (attempt > 0) {
      this.d.metrics.reResolved.inc({ result: "failed" });
      throw new GatewayError(
        ErrorReason.Unreachable,
        `session ${who} could not be reached after re-resolving its route (${f.why})`,
      );
    }
    this.d.log.debug({ run: who, pod: p.route.pod, why: f.why }, "re-resolving session route");
    try {
      p.route = await this.d.routes.reResolve(p.route, "session", f.why);
    } catch (re) {
      const unchanged = re instanceof GatewayError && re.reason === ErrorReason.Unreachable;
      this.d.metrics.reResolved.inc({ result: unchanged ? "unchanged" : "failed" });
      throw re;
    }
    this.d.metrics.reResolved.inc({ result: "rerouted" });
  }
}
