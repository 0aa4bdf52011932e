/**
 * Service-account tokens for projected volumes, from the TokenRequest API and bound to the pod
 * (NodeRestriction lets a node request tokens only for pods bound to it). Like kubelet, a token is
 * renewed once 80 % of its lifetime passed (or after 24 h); pod resyncs pick up the new one.
 */
import type { KubeClient } from "@kruntimes/kube";
import { path, R } from "@kruntimes/kube";
import type { Pod } from "../api/types.ts";
import type { TokenSource } from "./payloads.ts";

interface TokenRequestStatus {
  status: { token: string; expirationTimestamp: string };
}

interface Cached {
  token: string;
  issuedMs: number;
  expiresMs: number;
}

export class ServiceAccountTokens implements TokenSource {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly client: KubeClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a cached token needs renewal: 80 % of its lifetime passed, or older than 24 h. */
  static needsRenewal(c: { issuedMs: number; expiresMs: number }, nowMs: number): boolean {
    const ttl = c.expiresMs - c.issuedMs;
    return nowMs >= c.issuedMs + ttl * 0.8 || nowMs - c.issuedMs > 24 * 3600_000;
  }

  async token(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string> {
    const uid = pod.metadata.uid ?? "";
    const sa = pod.spec.serviceAccountName || "default";
    const key = `${uid}/${sa}/${audience ?? ""}/${expirationSeconds}`;
    const hit = this.cache.get(key);
    const now = this.now();
    if (hit && !ServiceAccountTokens.needsRenewal(hit, now)) return hit.token;
    const res = await this.client.create<TokenRequestStatus>(
      `${path(R.serviceAccounts, pod.metadata.namespace, sa)}/token`,
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          audiences: audience ? [audience] : [],
          // The apiserver's minimum is 10 minutes.
          expirationSeconds: Math.max(600, expirationSeconds),
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, uid },
        },
      },
    );
    const expiresMs = Date.parse(res.status.expirationTimestamp);
    this.cache.set(key, { token: res.status.token, issuedMs: now, expiresMs });
    return res.status.token;
  }

  /** Drops the pod's tokens (the pod is gone). */
  forget(uid: string): void {
    for (const k of this.cache.keys()) if (k.startsWith(`${uid}/`)) this.cache.delete(k);
  }
}
