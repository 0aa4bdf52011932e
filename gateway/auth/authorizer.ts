/**
 * Who may call which Run: TokenReview of the caller's bearer token, then a SubjectAccessReview for
 * `create runs/<subresource>` on that Run. Decisions are cached per (sha256(token), target) —
 * allowed ones for --auth-cache-ttl, refusals for the shorter --auth-deny-ttl — in one bounded
 * cache; token reviews in a second cache keyed by the hash alone, so one caller calling many Runs
 * costs one TokenReview. Concurrent misses for the same key share one review. Failures to reach the
 * apiserver are not cached (503). The token itself is never logged or stored.
 */
import type { KubeClient } from "@kruntimes/kube";
import { ErrorReason, GatewayError } from "../errors.ts";
import { bearerToken, tokenHash } from "./bearer.ts";
import {
  type AccessTarget,
  reviewAccess,
  reviewToken,
  type TokenReviewResult,
  type UserInfo,
} from "./reviews.ts";
import { TtlCache } from "./ttl-cache.ts";

export interface AuthorizerOptions {
  allowTtlMs: number;
  denyTtlMs: number;
  maxSize: number;
  now?: () => number;
}

export interface AuthMetrics {
  cacheHit(): void;
  cacheMiss(): void;
}

/** What the reviews need; the real one calls the apiserver, tests pass their own. */
export interface Reviewer {
  token(token: string): Promise<TokenReviewResult>;
  access(user: UserInfo, target: AccessTarget): Promise<{ allowed: boolean; reason?: string }>;
}

export function kubeReviewer(client: KubeClient): Reviewer {
  return {
    token: (token) => reviewToken(client, token),
    access: (user, target) => reviewAccess(client, user, target),
  };
}

type Decision = { ok: true; user: string } | { ok: false; reason: ErrorReason; message: string };

export class Authorizer {
  private readonly decisions: TtlCache<Decision>;
  private readonly tokens: TtlCache<TokenReviewResult>;
  private readonly inFlight = new Map<string, Promise<Decision>>();

  constructor(
    private readonly reviewer: Reviewer,
    private readonly opts: AuthorizerOptions,
    private readonly metrics?: AuthMetrics,
  ) {
    this.decisions = new TtlCache({ maxSize: opts.maxSize, now: opts.now });
    this.tokens = new TtlCache({ maxSize: opts.maxSize, now: opts.now });
  }

  /** Resolves with the caller's username, or throws Unauthenticated / PermissionDenied / AuthUnavailable. */
  async authorize(authorization: string | null | undefined, target: AccessTarget): Promise<string> {
    const token = bearerToken(authorization);
    if (!token) {
      throw new GatewayError(ErrorReason.Unauthenticated, "no bearer token in the Authorization header");
    }
    const hash = tokenHash(token);
    const key = `${hash}|${target.subresource}|${target.namespace}/${target.name}`;
    let decision = this.decisions.get(key);
    if (decision) this.metrics?.cacheHit();
    else {
      this.metrics?.cacheMiss();
      let pending = this.inFlight.get(key);
      if (!pending) {
        pending = this.decide(token, hash, key, target).finally(() => this.inFlight.delete(key));
        this.inFlight.set(key, pending);
      }
      decision = await pending;
    }
    if (decision.ok) return decision.user;
    throw new GatewayError(decision.reason, decision.message);
  }

  private async decide(token: string, hash: string, key: string, target: AccessTarget): Promise<Decision> {
    let decision: Decision;
    try {
      let review = this.tokens.get(hash);
      if (!review) {
        review = await this.reviewer.token(token);
        this.tokens.set(hash, review, review.authenticated ? this.opts.allowTtlMs : this.opts.denyTtlMs);
      }
      if (!review.authenticated) {
        decision = {
          ok: false,
          reason: ErrorReason.Unauthenticated,
          message: `the bearer token was not accepted (${review.error})`,
        };
      } else {
        const access = await this.reviewer.access(review.user, target);
        decision = access.allowed
          ? { ok: true, user: review.user.username }
          : {
              ok: false,
              reason: ErrorReason.PermissionDenied,
              message: `${review.user.username} may not create runs/${target.subresource} of ${target.namespace}/${target.name}${access.reason ? ` (${access.reason})` : ""}`,
            };
      }
    } catch (e) {
      throw new GatewayError(
        ErrorReason.AuthUnavailable,
        `checking the caller failed: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
    this.decisions.set(key, decision, decision.ok ? this.opts.allowTtlMs : this.opts.denyTtlMs);
    return decision;
  }
}
