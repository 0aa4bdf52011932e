/**
 * A thin typed Kubernetes client over Bun's fetch. Bun's fetch takes `tls: {ca, cert, key}`
 * directly, which @kubernetes/client-node loses on Bun (see DESIGN.md), and keeps the hot path
 * free of a generic client's per-request overhead.
 */
import { readFileSync, statSync } from "node:fs";
import { KubeError, type KubeStatus } from "./errors.ts";
import type { ClusterConnection } from "./kubeconfig.ts";

export type PatchType = "json" | "merge" | "strategic" | "apply";

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

/**
 * A request the apiserver has not answered in this time fails with a TimeoutError instead of
 * waiting on a connection that went silent (a partition, a black-holed load balancer; Bun's fetch
 * alone waits 5 minutes); callers retry as for any failed request. The apiserver ends every
 * request that is not a watch or a stream after its own `--request-timeout` (60 s by default), so
 * past that plus a margin nothing is coming. Raw (streaming) requests are exempt: a watch bounds
 * its own wait for the response headers (see watchStream).
 */
export const REQUEST_TIMEOUT_MS = 65_000;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Return the raw Response (for streams and logs) instead of parsed JSON. */
  raw?: boolean;
  /** Whole-request limit; default REQUEST_TIMEOUT_MS, none for raw requests; 0 = none. */
  timeoutMs?: number;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  finalizers?: string[];
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  /** Who set which fields (server-side field management); informers may drop it. */
  managedFields?: unknown[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface KubeClientOptions {
  /**
   * Who is calling (`name` or `name/version`): in the apiserver's audit log, and — the part before
   * any `/` — the field manager of every write that names none (`kubectl get -o yaml
   * --show-managed-fields`). Without it Bun's own ("Bun/1.x") names every component alike.
   */
  userAgent?: string;
}

export class KubeClient {
  private tokenCache?: { mtimeMs: number; token: string };
  private readonly tls: { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean };
  private readonly userAgent: string | undefined;

  constructor(
    readonly conn: ClusterConnection,
    opts: KubeClientOptions = {},
  ) {
    this.userAgent = opts.userAgent;
    this.tls = {
      ca: conn.ca,
      cert: conn.cert,
      key: conn.key,
      rejectUnauthorized: !conn.insecureSkipVerify,
    };
  }

  get namespace(): string {
    return this.conn.namespace;
  }

  private bearer(): string | undefined {
    if (this.conn.token) return this.conn.token;
    if (!this.conn.tokenFile) return undefined;
    const mtimeMs = statSync(this.conn.tokenFile).mtimeMs;
    if (this.tokenCache?.mtimeMs !== mtimeMs) {
      this.tokenCache = { mtimeMs, token: readFileSync(this.conn.tokenFile, "utf8").trim() };
    }
    return this.tokenCache.token;
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    let url = this.conn.server + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined) q.set(k, String(v));
      const s = q.toString();
      if (s) url += (url.includes("?") ? "&" : "?") + s;
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.userAgent) headers["user-agent"] = this.userAgent;
    const token = this.bearer();
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers["content-type"] = opts.contentType ?? "application/json";
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    }
    const timeoutMs = opts.timeoutMs ?? (opts.raw ? 0 : REQUEST_TIMEOUT_MS);
    const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const signal =
      timeout && opts.signal ? AbortSignal.any([opts.signal, timeout]) : (timeout ?? opts.signal);
    const res = await fetch(url, {
      method,
      headers,
      body,
      signal,
      tls: this.tls,
    } as RequestInit);
    if (!res.ok) {
      const text = await res.text();
      let status: KubeStatus;
      try {
        status = JSON.parse(text) as KubeStatus;
      } catch {
        status = { message: `${method} ${path}: HTTP ${res.status}: ${text.slice(0, 500)}` };
      }
      throw new KubeError(method, path, res.status, status);
    }
    if (opts.raw) return res as T;
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  get<T>(path: string, query?: RequestOptions["query"]): Promise<T> {
    return this.request<T>("GET", path, { query });
  }
  list<T>(path: string, query?: RequestOptions["query"]): Promise<KubeList<T>> {
    return this.request<KubeList<T>>("GET", path, { query });
  }
  create<T>(path: string, body: unknown, query?: RequestOptions["query"]): Promise<T> {
    return this.request<T>("POST", path, { body, query });
  }
  replace<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PUT", path, { body });
  }
  patch<T>(
    path: string,
    patch: unknown,
    type: PatchType = "merge",
    query?: RequestOptions["query"],
  ): Promise<T> {
    return this.request<T>("PATCH", path, { body: patch, contentType: PATCH_CONTENT_TYPE[type], query });
  }
  /** Server-side apply with a field manager; `force` takes ownership of conflicting fields. */
  apply<T>(path: string, obj: unknown, fieldManager: string, force = true): Promise<T> {
    return this.patch<T>(path, obj, "apply", { fieldManager, force });
  }
  delete<T = unknown>(path: string, body?: unknown, query?: RequestOptions["query"]): Promise<T> {
    return this.request<T>("DELETE", path, { body, query });
  }
}
