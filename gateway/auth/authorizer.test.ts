import { describe, expect, test } from "bun:test";
import { ErrorReason, GatewayError } from "../errors.ts";
import { Authorizer, type Reviewer } from "./authorizer.ts";
import type { AccessTarget } from "./reviews.ts";

const target: AccessTarget = { namespace: "ns", name: "fn", subresource: "invoke" };

function setup(over: Partial<Reviewer> = {}) {
  let t = 0;
  const calls = { token: 0, access: 0 };
  const counts = { hit: 0, miss: 0 };
  const reviewer: Reviewer = {
    async token(token) {
      calls.token++;
      return token === "good" || token === "other"
        ? { authenticated: true, user: { username: `u-${token}`, groups: ["g"] } }
        : { authenticated: false, error: "invalid bearer token" };
    },
    async access(user, tgt) {
      calls.access++;
      return { allowed: user.username === "u-good" && tgt.name === "fn", reason: "RBAC" };
    },
    ...over,
  };
  const auth = new Authorizer(
    reviewer,
    { allowTtlMs: 60_000, denyTtlMs: 5_000, maxSize: 100, now: () => t },
    { cacheHit: () => counts.hit++, cacheMiss: () => counts.miss++ },
  );
  return { auth, calls, counts, advance: (ms: number) => (t += ms) };
}

async function reasonOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return (e as GatewayError).reason;
  }
}

describe("Authorizer", () => {
  test("no header, a non-bearer header and a rejected token are Unauthenticated", async () => {
    const { auth } = setup();
    expect(await reasonOf(auth.authorize(undefined, target))).toBe(ErrorReason.Unauthenticated);
    expect(await reasonOf(auth.authorize("Basic abc", target))).toBe(ErrorReason.Unauthenticated);
    expect(await reasonOf(auth.authorize("Bearer garbage", target))).toBe(ErrorReason.Unauthenticated);
  });

  test("allowed decisions are cached for the allow TTL", async () => {
    const { auth, calls, counts, advance } = setup();
    expect(await auth.authorize("Bearer good", target)).toBe("u-good");
    expect(await auth.authorize("bearer good", target)).toBe("u-good");
    expect(calls).toEqual({ token: 1, access: 1 });
    expect(counts).toEqual({ hit: 1, miss: 1 });
    advance(60_000);
    await auth.authorize("Bearer good", target);
    expect(calls).toEqual({ token: 2, access: 2 });
  });

  test("denials are cached for the shorter deny TTL, and per target", async () => {
    const { auth, calls, advance } = setup();
    expect(await reasonOf(auth.authorize("Bearer other", target))).toBe(ErrorReason.PermissionDenied);
    expect(await reasonOf(auth.authorize("Bearer other", target))).toBe(ErrorReason.PermissionDenied);
    expect(calls.access).toBe(1);
    advance(5_000);
    expect(await reasonOf(auth.authorize("Bearer other", target))).toBe(ErrorReason.PermissionDenied);
    expect(calls.access).toBe(2);
    // Another Run: a new access review, but the token review is reused.
    expect(await reasonOf(auth.authorize("Bearer good", { ...target, name: "other" }))).toBe(
      ErrorReason.PermissionDenied,
    );
    expect(await auth.authorize("Bearer good", target)).toBe("u-good");
    expect(calls.token).toBe(2); // "other" once (still cached after the denial expired), "good" once
  });

  test("the denial message names the user, the subresource and the Run", async () => {
    const { auth } = setup();
    try {
      await auth.authorize("Bearer other", target);
      throw new Error("allowed");
    } catch (e) {
      expect((e as GatewayError).message).toContain("u-other may not create runs/invoke of ns/fn");
    }
  });

  test("concurrent misses for one key share one review", async () => {
    const { auth, calls } = setup();
    await Promise.all(Array.from({ length: 20 }, () => auth.authorize("Bearer good", target)));
    expect(calls).toEqual({ token: 1, access: 1 });
  });

  test("an apiserver failure is AuthUnavailable and not cached", async () => {
    let fail = true;
    const { auth, calls } = setup({
      async token() {
        calls.token++;
        if (fail) throw new Error("connection refused");
        return { authenticated: true, user: { username: "u-good" } };
      },
    });
    const err = await auth.authorize("Bearer good", target).catch((e) => e as GatewayError);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).reason).toBe(ErrorReason.AuthUnavailable);
    expect((err as GatewayError).retryAfterSeconds).toBe(1);
    fail = false;
    expect(await auth.authorize("Bearer good", target)).toBe("u-good");
  });
});
