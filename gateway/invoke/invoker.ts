/**
 * One invocation, the same for every surface (plain HTTP, Connect, gRPC, gRPC-Web, on every
 * listener): take a slot under the concurrency bound, authorize the caller for this Run, find its
 * route, check the body against the gateway's and the Run's limits, call the owning pod's runtimed
 * with the route's fence (re-resolving a stale route once), and turn the answer into an outcome
 * or a GatewayError. Surfaces only translate their wire format to an InvokeCall and back.
 */
import type { InvokeResponse } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import type { Logger } from "pino";
import type { Authorizer } from "../auth/authorizer.ts";
import type { DataplaneClient } from "../dataplane/dataplane-client.ts";
import { classifyDataplaneError } from "../dataplane/failures.ts";
import { codeName, ErrorReason, GATEWAY_BODY_LIMIT_NEXT, GatewayError } from "../errors.ts";
import type { ConcurrencyLimit } from "../limits/concurrency.ts";
import { type DeadlineOptions, effectiveTimeoutMs } from "../limits/deadline.ts";
import type { Metrics, Protocol } from "../metrics.ts";
import type { Route } from "../routing/route.ts";
import type { RouteTable } from "../routing/route-table.ts";

export interface InvokeCall {
  namespace: string;
  run: string;
  body: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
  /** The caller's Authorization header (never logged). */
  authorization: string | null | undefined;
  /** What the caller asked for, ms (undefined = the default). */
  requestedTimeoutMs: number | undefined;
  protocol: Protocol;
  signal?: AbortSignal;
}

export interface InvokeOutcome {
  status: number;
  contentType: string;
  body: Uint8Array;
  headers: Record<string, string>;
  invocationId: string;
  durationMicros: bigint;
}

export interface InvokerDeps {
  limit: ConcurrencyLimit;
  authorizer: Authorizer;
  routes: RouteTable;
  dataplane: DataplaneClient;
  metrics: Metrics;
  log: Logger;
  maxRequestBytes: number;
  maxResponseBytes: number;
  deadline: DeadlineOptions;
}

const SERVICE = "kruntimes.gateway.v1.FunctionService";
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export class Invoker {
  constructor(private readonly d: InvokerDeps) {}

  async invoke(call: InvokeCall): Promise<InvokeOutcome> {
    const t0 = performance.now();
    let code = "ok";
    let release: (() => void) | undefined;
    try {
      release = this.d.limit.acquire();
      this.d.metrics.inFlight.inc();
      return await this.serve(call);
    } catch (e) {
      const err = GatewayError.from(e);
      code = codeName(err.row.code);
      if (err.reason === ErrorReason.Internal) {
        this.d.log.error({ err: e, namespace: call.namespace, run: call.run }, "invocation failed");
      }
      throw err;
    } finally {
      if (release) {
        release();
        this.d.metrics.inFlight.dec();
      }
      const labels = { service: SERVICE, method: "Invoke", protocol: call.protocol };
      this.d.metrics.requests.inc({ ...labels, code });
      this.d.metrics.duration.observe(labels, (performance.now() - t0) / 1000);
    }
  }

  private async serve(call: InvokeCall): Promise<InvokeOutcome> {
    if (!NAME.test(call.namespace) || !NAME.test(call.run)) {
      throw new GatewayError(
        ErrorReason.InvalidArgument,
        "namespace and run must be Kubernetes object names",
      );
    }
    await this.d.authorizer.authorize(call.authorization, {
      namespace: call.namespace,
      name: call.run,
      subresource: "invoke",
    });
    if (call.body.byteLength > this.d.maxRequestBytes) {
      throw new GatewayError(
        ErrorReason.RequestTooLarge,
        `the body has ${call.body.byteLength} bytes; this gateway accepts at most ${this.d.maxRequestBytes}`,
        { next: GATEWAY_BODY_LIMIT_NEXT },
      );
    }
    let route = await this.d.routes.resolve(call.namespace, call.run, "function");
    if (call.body.byteLength > route.maxRequestBytes) {
      throw new GatewayError(
        ErrorReason.RequestTooLarge,
        `the body has ${call.body.byteLength} bytes; run ${call.namespace}/${call.run} accepts at most ${route.maxRequestBytes}`,
      );
    }
    const timeoutMs = effectiveTimeoutMs(call.requestedTimeoutMs, this.d.deadline);
    const deadline = performance.now() + timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    const invocationId = Bun.randomUUIDv7();
    let res: InvokeResponse;
    for (let attempt = 0; ; attempt++) {
      try {
        res = await this.callPod(
          route,
          call,
          invocationId,
          Math.max(1, Math.ceil(deadline - performance.now())),
          signal,
        );
        break;
      } catch (e) {
        if (timeout.aborted) throw new GatewayError(ErrorReason.Deadline, `no answer within ${timeoutMs} ms`);
        const failure = classifyDataplaneError(e);
        if (failure.kind === "error") throw failure.error;
        if (attempt > 0) {
          this.d.metrics.reResolved.inc({ result: "failed" });
          throw new GatewayError(
            ErrorReason.Unreachable,
            `run ${call.namespace}/${call.run} could not be reached after re-resolving its route (${failure.why})`,
          );
        }
        this.d.log.debug(
          { namespace: call.namespace, run: call.run, pod: route.pod, why: failure.why },
          "re-resolving route",
        );
        try {
          route = await this.d.routes.reResolve(route, "function", failure.why);
        } catch (re) {
          const unchanged = re instanceof GatewayError && re.reason === ErrorReason.Unreachable;
          this.d.metrics.reResolved.inc({ result: unchanged ? "unchanged" : "failed" });
          throw re;
        }
        this.d.metrics.reResolved.inc({ result: "rerouted" });
      }
    }
    if (res.handlerError) {
      const h = res.handlerError;
      throw new GatewayError(ErrorReason.HandlerError, `the handler failed: ${h.type}: ${h.message}`, {
        handlerError: {
          type: h.type,
          message: h.message,
          traceback: h.traceback,
          exitCode: h.exitCode,
          invocationId,
        },
      });
    }
    if (res.body.byteLength > this.d.maxResponseBytes) {
      throw new GatewayError(
        ErrorReason.ResponseTooLarge,
        `the handler returned ${res.body.byteLength} bytes; this gateway passes at most ${this.d.maxResponseBytes}`,
      );
    }
    return {
      status: res.status || 200,
      contentType: res.contentType,
      body: res.body,
      headers: res.headers,
      invocationId,
      durationMicros: res.durationMicros,
    };
  }

  private async callPod(
    route: Route,
    call: InvokeCall,
    invocationId: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<InvokeResponse> {
    const t0 = performance.now();
    try {
      return await this.d.dataplane.invoke(route, {
        invocationId,
        body: call.body,
        contentType: call.contentType,
        headers: call.headers,
        timeoutMs,
        signal,
      });
    } finally {
      this.d.metrics.dataplaneDuration.observe((performance.now() - t0) / 1000);
    }
  }
}
