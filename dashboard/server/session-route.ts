/**
 * `GET /api/session`: who the apiserver says the caller is (a SelfSubjectReview, which stores
 * nothing). Signing in is this call succeeding: a wrong token is a 401 here, not later.
 */
import type { SessionInfo } from "../shared/types.ts";
import type { Caller } from "./callers.ts";
import type { AuthMode } from "./options.ts";

const SELF_REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}

export async function sessionInfo(
  caller: Caller,
  mode: AuthMode,
  gatewayNamespace: string,
): Promise<SessionInfo> {
  const review = await caller.client.request<SelfSubjectReview>("POST", SELF_REVIEW, {
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  });
  const u = review.status?.userInfo;
  return {
    mode,
    ...(u?.username ? { user: u.username } : {}),
    ...(u?.groups ? { groups: u.groups } : {}),
    gatewayNamespace,
  };
}
