/**
 * Who a request acts as. Token mode: the bearer token the browser sends with each request,
 * used as is against the apiserver for that request only (never stored, never logged). Local
 * mode (`krt dashboard`): the kubeconfig's own credentials, served on loopback only.
 */
import { readFileSync } from "node:fs";
import type { ClusterConnection } from "@kruntimes/kube";
import { DashboardError } from "./errors.ts";
import type { AuthMode } from "./options.ts";
import { callerConnection, ReadOnlyKubeClient } from "./read-only-client.ts";

export interface Caller {
  client: ReadOnlyKubeClient;
  /** The bearer token to forward to the gateway and the artifact maintainer, if there is one. */
  token?: string;
}

export interface Callers {
  readonly mode: AuthMode;
  /** The caller of this request; `signal` ends every request made for it (a closed stream). */
  of(request: Request, signal?: AbortSignal): Caller;
}

export function bearerOf(request: Request): string | undefined {
  const h = request.headers.get("authorization");
  const m = h ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m?.[1];
}

export function createCallers(mode: AuthMode, cluster: ClusterConnection): Callers {
  return {
    mode,
    of(request, signal) {
      if (mode === "kubeconfig") {
        const token =
          cluster.token ?? (cluster.tokenFile ? readFileSync(cluster.tokenFile, "utf8").trim() : undefined);
        return { client: new ReadOnlyKubeClient(cluster, signal), ...(token ? { token } : {}) };
      }
      const token = bearerOf(request);
      if (!token)
        throw new DashboardError(
          401,
          "Unauthorized",
          "no bearer token: sign in first",
          "paste a Kubernetes token (e.g. `kubectl create token <serviceaccount> -n <namespace>`)",
        );
      return { client: new ReadOnlyKubeClient(callerConnection(cluster, token), signal), token };
    },
  };
}
