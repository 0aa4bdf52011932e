/**
 * The only Kubernetes client the dashboard has: a `KubeClient` that sends GET (get, list, watch,
 * logs) and nothing else. The one exception is POST to the self-review endpoints
 * (SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview): they ask the apiserver a
 * question about the caller and store nothing. Every other method is refused here, before any
 * request leaves the process, so no route added later can write through the dashboard.
 */
import { type ClusterConnection, KubeClient, type RequestOptions } from "@kruntimes/kube";

/** The POST paths that create nothing: the apiserver answers about the caller and keeps no object. */
export const SELF_REVIEW_PATHS: ReadonlySet<string> = new Set([
  "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
  "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
  "/apis/authentication.k8s.io/v1/selfsubjectreviews",
]);

export class WriteRefused extends Error {
  override name = "WriteRefused";
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(`the dashboard is read-only: ${method} ${path} is refused`);
  }
}

/** Whether the read-only client lets this request out. */
export function isReadRequest(method: string, path: string): boolean {
  const m = method.toUpperCase();
  if (m === "GET") return true;
  return m === "POST" && SELF_REVIEW_PATHS.has(path.split("?")[0] ?? "");
}

export class ReadOnlyKubeClient extends KubeClient {
  /** `signal`: aborts every request of this client (the caller's stream closed). */
  constructor(
    conn: ClusterConnection,
    private readonly signal?: AbortSignal,
  ) {
    super(conn, { userAgent: "kruntimes-dashboard" });
  }

  override request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    if (!isReadRequest(method, path)) return Promise.reject(new WriteRefused(method, path));
    const signal =
      this.signal && opts.signal ? AbortSignal.any([this.signal, opts.signal]) : (this.signal ?? opts.signal);
    return super.request<T>(method, path, { ...opts, signal });
  }
}

/**
 * The connection used for one caller: the cluster's address and CA with the caller's own bearer
 * token and nothing else (no client certificate, no token file of the dashboard's own account).
 */
export function callerConnection(cluster: ClusterConnection, token: string): ClusterConnection {
  return {
    server: cluster.server,
    ca: cluster.ca,
    insecureSkipVerify: cluster.insecureSkipVerify,
    token,
    namespace: cluster.namespace,
    source: "caller token",
  };
}
