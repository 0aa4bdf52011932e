/**
 * The gateway's routes: an informer of Ready Runs (server-side field selector
 * `status.phase=Ready`) and one of the Runtimes' EndpointSlices (pod UID → dataplane address).
 * A call for a Run the informer does not hold (not Ready, unknown, or Ready so recently the watch
 * has not said so yet) asks the apiserver once for that one Run by name — a `list` with
 * `metadata.name=<run>`, so the gateway needs no `get` — and answers 404, 409 or routes it. A
 * stale route is re-resolved once from the apiserver; an unchanged one is 503.
 */
import { Labels, type Run, RunResource } from "@kruntimes/api";
import { Informer, type KubeClient, path } from "@kruntimes/kube";
import { ErrorReason, GatewayError } from "../errors.ts";
import { EndpointIndex, type EndpointSlice } from "./endpoint-index.ts";
import { type Resolution, type Route, resolveRun, sameRoute } from "./route.ts";

const ENDPOINT_SLICES = { group: "discovery.k8s.io", version: "v1", plural: "endpointslices" } as const;

export interface RouteTableOptions {
  /** Only this namespace (default: all). */
  namespace?: string;
  /**
   * How long a call waits for a pod's EndpointSlice entry to appear before 503, when the Run's
   * status has no `endpoint.address` either.
   */
  endpointWaitMs?: number;
  onError?(what: string, err: unknown): void;
}

export type CallKind = "function" | "session";

export class RouteTable {
  readonly runs: Informer<Run>;
  readonly slices: Informer<EndpointSlice>;
  readonly endpoints = new EndpointIndex();

  constructor(
    private readonly client: KubeClient,
    private readonly opts: RouteTableOptions = {},
  ) {
    this.runs = new Informer<Run>(client, path(RunResource, opts.namespace), {
      fieldSelector: "status.phase=Ready",
    });
    // EndpointSlices carry their Service's labels; every Runtime's Service has the runtime label.
    this.slices = new Informer<EndpointSlice>(client, path(ENDPOINT_SLICES, opts.namespace), {
      labelSelector: Labels.runtime,
    });
    this.slices.on({
      add: (s) => this.endpoints.upsert(s),
      update: (s) => this.endpoints.upsert(s),
      delete: (s) => this.endpoints.remove(s),
      error: (e) => opts.onError?.("endpointslices", e),
    });
    this.runs.on({ error: (e) => opts.onError?.("runs", e) });
  }

  start(): this {
    this.runs.start();
    this.slices.start();
    return this;
  }

  stop(): void {
    this.runs.stop();
    this.slices.stop();
  }

  get synced(): boolean {
    return this.runs.hasSynced && this.slices.hasSynced;
  }

  async waitForSync(): Promise<void> {
    await Promise.all([this.runs.waitForSync(), this.slices.waitForSync()]);
  }

  /** The route to call `namespace/name`, or a GatewayError saying why there is none. */
  async resolve(namespace: string, name: string, kind: CallKind): Promise<Route> {
    this.checkNamespace(namespace, name);
    const cached = this.runs.get(`${namespace}/${name}`);
    const run = cached ?? (await this.fetch(namespace, name));
    return this.routeOrThrow(run, kind);
  }

  /**
   * `stale` was refused or unreachable: read the Run from the apiserver and route again, once. The
   * same Run on the same pod and attempt is not a new route: 503.
   */
  async reResolve(stale: Route, kind: CallKind, why: string): Promise<Route> {
    const run = await this.fetch(stale.namespace, stale.name);
    const route = await this.routeOrThrow(run, kind);
    if (sameRoute(route, stale)) {
      throw new GatewayError(
        ErrorReason.Unreachable,
        `${stale.namespace}/${stale.name} on pod ${stale.pod} (attempt ${stale.attempt}) could not be called (${why}) and the Run still names that pod`,
      );
    }
    return route;
  }

  private checkNamespace(namespace: string, name: string): void {
    if (this.opts.namespace && namespace !== this.opts.namespace) {
      throw new GatewayError(
        ErrorReason.NotFound,
        `run ${namespace}/${name}: this gateway serves only namespace ${this.opts.namespace}`,
      );
    }
  }

  private async fetch(namespace: string, name: string): Promise<Run> {
    let list: Awaited<ReturnType<KubeClient["list"]>>;
    try {
      list = await this.client.list<Run>(path(RunResource, namespace), {
        fieldSelector: `metadata.name=${name}`,
      });
    } catch (e) {
      throw new GatewayError(
        ErrorReason.Unreachable,
        `reading run ${namespace}/${name} failed: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    const run = list.items[0] as Run | undefined;
    if (!run) throw new GatewayError(ErrorReason.NotFound, `run ${namespace}/${name} does not exist`);
    return run;
  }

  private async routeOrThrow(run: Run, kind: CallKind): Promise<Route> {
    let r: Resolution = resolveRun(run, kind, (uid) => this.endpoints.get(uid));
    if (r.kind === "noEndpoint") {
      const addr = await this.endpoints.waitFor(r.podUID, this.opts.endpointWaitMs ?? 1000);
      if (addr) r = resolveRun(run, kind, () => addr);
    }
    const who = `${run.metadata.namespace}/${run.metadata.name}`;
    switch (r.kind) {
      case "route":
        return r.route;
      case "noEndpoint":
        throw new GatewayError(
          ErrorReason.Unreachable,
          `run ${who} is served by pod ${r.pod}, which has no dataplane endpoint yet (no EndpointSlice entry, no status.endpoint.address)`,
        );
      case "terminating":
        throw new GatewayError(
          ErrorReason.Unreachable,
          `run ${who} is served by pod ${r.pod} (attempt ${r.attempt}), which is terminating; call again once the Run is re-placed on another pod`,
        );
      case "notReady": {
        const what =
          r.mode !== kind
            ? `run ${who} is a ${r.mode || "task"} Run, not a ${kind}`
            : `run ${who} is ${r.phase || "not yet scheduled"}, not Ready`;
        throw new GatewayError(ErrorReason.NotReady, what, { notReady: { phase: r.phase, mode: r.mode } });
      }
    }
  }
}
