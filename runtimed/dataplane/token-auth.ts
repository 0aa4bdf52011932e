/**
 * Who may call the dataplane: a bearer token the cluster accepts (TokenReview with the dataplane
 * audience) whose username is in the allowed list. Decisions are cached by sha256(token) —
 * allowed ones for `allowTtlMs`, refusals for `denyTtlMs` — in a bounded map (oldest out first),
 * and concurrent calls with the same token share one TokenReview, so the apiserver sees one
 * review per token per TTL, not one per invocation. Tokens are never logged or kept.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { KubeClient } from "@kruntimes/kube";
import type { Metrics } from "../metrics.ts";
import type { DataplaneOptions } from "../options.ts";

export interface ReviewResult {
  authenticated: boolean;
  username?: string;
  error?: string;
}

export type TokenReviewer = (token: string) => Promise<ReviewResult>;

type Decision = { ok: true } | { ok: false; code: Code; message: string };

interface Entry {
  decision: Decision;
  expiresMs: number;
}

/** The cluster's TokenReview, asked for the dataplane audience. */
export function clusterReviewer(client: KubeClient, audience: string): TokenReviewer {
  return async (token) => {
    const tr = await client.request<{
      status?: { authenticated?: boolean; user?: { username?: string }; error?: string };
    }>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token, audiences: [audience] },
      },
    });
    return {
      authenticated: tr.status?.authenticated === true,
      ...(tr.status?.user?.username ? { username: tr.status.user.username } : {}),
      ...(tr.status?.error ? { error: tr.status.error } : {}),
    };
  };
}

function digest(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

export class DataplaneAuth {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Decision>>();
  private readonly allowed: ReadonlySet<string>;

  constructor(
    private readonly o: Pick<DataplaneOptions, "subjects" | "allowTtlMs" | "denyTtlMs" | "cacheSize">,
    private readonly review: TokenReviewer,
    private readonly metrics: Pick<Metrics, "dataplaneAuth">,
    private readonly now: () => number = Date.now,
  ) {
    this.allowed = new Set(o.subjects);
  }

  /** Resolves when the `authorization` header's token may call; throws the Connect error otherwise. */
  async check(authorization: string | null): Promise<void> {
    const m = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!m) {
      this.metrics.dataplaneAuth.inc({ decision: "unauthenticated", cached: "false" });
      throw new ConnectError("the dataplane needs Authorization: Bearer <token>", Code.Unauthenticated);
    }
    const key = digest(m[1] as string);
    const hit = this.cache.get(key);
    let decision: Decision;
    if (hit && hit.expiresMs > this.now()) {
      decision = hit.decision;
      this.count(decision, true);
    } else {
      let p = this.pending.get(key);
      if (!p) {
        p = this.decide(m[1] as string, key).finally(() => this.pending.delete(key));
        this.pending.set(key, p);
      }
      decision = await p;
    }
    if (!decision.ok) throw new ConnectError(decision.message, decision.code);
  }

  private count(d: Decision, cached: boolean): void {
    const decision = d.ok
      ? "allowed"
      : d.code === Code.PermissionDenied
        ? "forbidden"
        : d.code === Code.Unauthenticated
          ? "unauthenticated"
          : "error";
    this.metrics.dataplaneAuth.inc({ decision, cached: String(cached) });
  }

  private async decide(token: string, key: string): Promise<Decision> {
    let d: Decision;
    try {
      const r = await this.review(token);
      if (!r.authenticated)
        d = {
          ok: false,
          code: Code.Unauthenticated,
          message: `the token was not accepted for the dataplane audience${r.error ? `: ${r.error}` : ""}`,
        };
      else if (!r.username || !this.allowed.has(r.username))
        d = {
          ok: false,
          code: Code.PermissionDenied,
          message: `${r.username ?? "this caller"} may not call the dataplane (allowed: ${[...this.allowed].join(", ") || "nobody"})`,
        };
      else d = { ok: true };
    } catch (e) {
      // Not cached: the next call asks again.
      const out: Decision = {
        ok: false,
        code: Code.Unavailable,
        message: `cannot check the token now (TokenReview failed: ${e instanceof Error ? e.message : e})`,
      };
      this.count(out, false);
      return out;
    }
    this.count(d, false);
    this.remember(key, d);
    return d;
  }

  private remember(key: string, d: Decision): void {
    this.cache.delete(key);
    while (this.cache.size >= this.o.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    this.cache.set(key, {
      decision: d,
      expiresMs: this.now() + (d.ok ? this.o.allowTtlMs : this.o.denyTtlMs),
    });
  }

  get cached(): number {
    return this.cache.size;
  }
}
