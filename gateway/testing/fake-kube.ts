/**
 * A stand-in Kubernetes API for the gateway's in-process tests and its benchmark: just what the
 * gateway asks — list/watch of Runs (field selectors `status.phase=Ready`, `metadata.name=`) and
 * EndpointSlices, TokenReview and SubjectAccessReview — answered from in-memory state the test
 * controls. Watches stream each change as it is made. Test infrastructure only: the cluster tests
 * (test/e2e/gateway.test.ts) run the gateway against a real apiserver.
 */
import type { Run } from "@kruntimes/api";
import { KubeClient } from "@kruntimes/kube";
import type { EndpointSlice } from "../routing/endpoint-index.ts";

type Obj = Run | EndpointSlice;
interface Watcher {
  kind: "runs" | "slices";
  match(o: Obj): boolean;
  send(type: string, o: Obj): void;
}

export class FakeKube {
  readonly runs = new Map<string, Run>();
  readonly slices = new Map<string, EndpointSlice>();
  /** token → username */
  readonly tokens = new Map<string, string>();
  /** `${user}|${namespace}/${name}|${subresource}` granted */
  readonly grants = new Set<string>();
  readonly calls = { tokenReviews: 0, accessReviews: 0, runLookups: 0 };
  private readonly watchers = new Set<Watcher>();
  private rv = 1;
  private server?: ReturnType<typeof Bun.serve>;

  start(): this {
    this.server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (r) => this.handle(r) });
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.server?.port}`;
  }

  client(): KubeClient {
    return new KubeClient({ server: this.url, namespace: "default" });
  }

  stop(): void {
    this.server?.stop(true);
  }

  grant(user: string, namespace: string, name: string, subresource = "invoke"): void {
    this.grants.add(`${user}|${namespace}/${name}|${subresource}`);
  }

  putRun(run: Run): void {
    const key = `${run.metadata.namespace}/${run.metadata.name}`;
    const old = this.runs.get(key);
    run.metadata.resourceVersion = String(++this.rv);
    this.runs.set(key, run);
    const wasReady = old?.status?.phase === "Ready";
    const isReady = run.status?.phase === "Ready";
    if (isReady) this.emit("runs", wasReady ? "MODIFIED" : "ADDED", run);
    else if (wasReady) this.emit("runs", "DELETED", run);
  }

  putSlice(slice: EndpointSlice): void {
    const key = `${slice.metadata.namespace}/${slice.metadata.name}`;
    const had = this.slices.has(key);
    slice.metadata.resourceVersion = String(++this.rv);
    this.slices.set(key, slice);
    this.emit("slices", had ? "MODIFIED" : "ADDED", slice);
  }

  private emit(kind: "runs" | "slices", type: string, o: Obj): void {
    for (const w of this.watchers) if (w.kind === kind && w.match(o)) w.send(type, o);
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const p = url.pathname;
    if (req.method === "POST" && p.endsWith("/tokenreviews")) {
      this.calls.tokenReviews++;
      const body = (await req.json()) as { spec: { token: string } };
      const user = this.tokens.get(body.spec.token);
      return Response.json({
        status: user
          ? { authenticated: true, user: { username: user, groups: [] } }
          : { authenticated: false, error: "invalid token" },
      });
    }
    if (req.method === "POST" && p.endsWith("/subjectaccessreviews")) {
      this.calls.accessReviews++;
      const { spec } = (await req.json()) as {
        spec: { user: string; resourceAttributes: { namespace: string; name: string; subresource: string } };
      };
      const a = spec.resourceAttributes;
      return Response.json({
        status: { allowed: this.grants.has(`${spec.user}|${a.namespace}/${a.name}|${a.subresource}`) },
      });
    }
    const runs = /^\/apis\/kruntimes\.io\/v1alpha1(?:\/namespaces\/([^/]+))?\/runs$/.exec(p);
    const slices = /^\/apis\/discovery\.k8s\.io\/v1(?:\/namespaces\/([^/]+))?\/endpointslices$/.exec(p);
    if (!runs && !slices) return new Response("not found", { status: 404 });
    const kind = runs ? "runs" : "slices";
    const ns = (runs ?? slices)?.[1];
    const field = url.searchParams.get("fieldSelector") ?? "";
    const match = (o: Obj): boolean => {
      if (ns && o.metadata.namespace !== ns) return false;
      if (kind === "slices") return true;
      const run = o as Run;
      if (field === "status.phase=Ready") return run.status?.phase === "Ready";
      if (field.startsWith("metadata.name="))
        return run.metadata.name === field.slice("metadata.name=".length);
      return true;
    };
    if (url.searchParams.get("watch")) return this.watch(kind, match, req.signal);
    if (field.startsWith("metadata.name=")) this.calls.runLookups++;
    const source: Iterable<Obj> = kind === "runs" ? this.runs.values() : this.slices.values();
    return Response.json({
      metadata: { resourceVersion: String(this.rv) },
      items: [...source].filter(match),
    });
  }

  private watch(kind: "runs" | "slices", match: (o: Obj) => boolean, signal: AbortSignal): Response {
    const enc = new TextEncoder();
    let watcher: Watcher;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        watcher = {
          kind,
          match,
          send: (type, object) => controller.enqueue(enc.encode(`${JSON.stringify({ type, object })}\n`)),
        };
        this.watchers.add(watcher);
        signal.addEventListener("abort", () => this.watchers.delete(watcher));
      },
      cancel: () => {
        this.watchers.delete(watcher);
      },
    });
    return new Response(stream, { headers: { "content-type": "application/json" } });
  }
}

/** A Ready function Run served by `podUID` under `attempt`. */
export function readyFunctionRun(o: {
  namespace: string;
  name: string;
  uid: string;
  pod: string;
  podUID: string;
  attempt: number;
  phase?: string;
  maxRequestBytes?: number;
  /** status.endpoint.address (runtimed writes it; the route when no EndpointSlice lists the pod). */
  address?: string;
}): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: o.name, namespace: o.namespace, uid: o.uid },
    spec: {
      runtime: "python",
      mode: { function: { handler: "handle", maxRequestBytes: o.maxRequestBytes } },
      source: { inline: "def handle(r): return r" },
    },
    status: {
      phase: o.phase ?? "Ready",
      endpoint: {
        pod: o.pod,
        podUID: o.podUID,
        attempt: o.attempt,
        ...(o.address ? { address: o.address } : {}),
      },
    },
  } as unknown as Run;
}

/** The EndpointSlice of a Runtime's headless Service listing pods with their dataplane port. */
export function dataplaneSlice(
  namespace: string,
  runtime: string,
  pods: { uid: string; ip: string; port: number }[],
): EndpointSlice {
  return {
    metadata: { name: `${runtime}-slice`, namespace, labels: { "kruntimes.io/runtime": runtime } },
    addressType: "IPv4",
    ports: pods[0] ? [{ name: "dataplane", port: pods[0].port, protocol: "TCP" }] : [],
    endpoints: pods.map((p) => ({
      addresses: [p.ip],
      conditions: { ready: true },
      targetRef: { kind: "Pod", uid: p.uid, name: `pod-${p.uid}` },
    })),
  };
}
